#!/bin/bash
# Run by up.sh before our packages are installed (E2E_BEFORE_INSTALL): seeds
# the control plane as a Cozystack platform with the TenantGateway
# controller leaves it, then runs the steps of docs/migration.md that come
# before the Configuration is installed. up.sh then installs the
# Configuration (the next step), and TestMigration (migration_test.go) runs
# the rest and checks the result.
#
# The platform (test/e2e/testdata): Helm v4 installs a chart shaped like
# cozystack-controller (charts/cozystack-controller: the TenantGateway CRD a
# template without keep, the controller's Deployment) and one release of
# the tenant chart per gateway-owning tenant (charts/tenant: the namespace,
# its gateway label written by Helm, and the TenantGateway), both tenants
# attaching the platform's namespace mig-http-dash; a reduced Flux
# HelmRelease records the controller's release. Then, from
# testdata/reference, what the controller composed for them under its field
# manager and owner references, the namespace labels it patched (the shared
# namespace labelled for mig-dns, reconciled last), the route status it
# wrote, the Secrets cert-manager issued in mig-dns; mig-dns's Certificate
# is issued for real by cert-manager's controllers, Pebble and BIND
# (tls.sh), which the migration pass points at mig-dns (run.sh).
#
# The controller itself does not run here (it is not a dependency of this
# project); it is stopped before the migration starts anyway, so what it
# leaves is all the migration sees.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
D=$ROOT/test/e2e/testdata/reference
CHARTS=$ROOT/test/e2e/testdata/charts
REF=cozystack-controller # the controller's field manager (docs/migration.md)
R=${E2E_DIR:?}
export HELM_CONFIG_HOME=$R/run/helm/config HELM_CACHE_HOME=$R/run/helm/cache HELM_DATA_HOME=$R/run/helm/data
ln -sf "${HELM:?}" "$R/run/bin/helm"
helm install cozystack-controller "$CHARTS/cozystack-controller" -n cozy-system --create-namespace >/dev/null
kubectl wait crd tenantgateways.gateway.cozystack.io --for=condition=Established --timeout=60s >/dev/null
kubectl apply --server-side --field-manager=e2e -f "$D/flux.yaml" >/dev/null
kubectl wait crd helmreleases.helm.toolkit.fluxcd.io --for=condition=Established --timeout=60s >/dev/null
kubectl create --field-manager=cozystack-operator -f "$D/helmrelease.yaml" >/dev/null
helm install tenant-mig-http "$CHARTS/tenant" -n cozy-system -f "$D/tenant-mig-http.yaml" >/dev/null
helm install tenant-mig-dns "$CHARTS/tenant" -n cozy-system -f "$D/tenant-mig-dns.yaml" --set-file gateway.acme.caBundle="$R/pki/pebble-ca.crt" >/dev/null
kubectl create --field-manager=helm-controller -f "$D/platform.yaml" >/dev/null
kubectl create --field-manager=cert-manager-certificates -f "$D/secrets.yaml" >/dev/null
kubectl -n mig-dns create secret generic tsig --from-literal=tsig-secret-key="$(cat "$R/run/tls/tsig.secret")" >/dev/null
uid(){ kubectl get tenantgateways.gateway.cozystack.io -n "$1" cozystack -o jsonpath='{.metadata.uid}'; }
sed -e "s/@UID_mig-http@/$(uid mig-http)/" -e "s/@UID_mig-dns@/$(uid mig-dns)/" -e "s#@PEBBLE_CA@#$(base64 -w0 < "$R/pki/pebble-ca.crt")#" "$D/controller.yaml" \
  | kubectl create --field-manager=$REF -f - >/dev/null
# Namespace marks: a JSON merge patch on the owner and each attached
# namespace, as the controller sends them. Both tenants attach
# mig-http-dash: it carries the marks of whichever reconciled last, here
# mig-dns (docs/migration.md, Pre-flight).
for ns in mig-http:mig-http mig-http-dash:mig-dns mig-dns:mig-dns; do
  kubectl patch ns "${ns%%:*}" --type=merge --field-manager=$REF \
    -p "{\"metadata\":{\"labels\":{\"namespace.cozystack.io/gateway\":\"${ns#*:}\"},\"annotations\":{\"cozystack.io/gateway-attached-by\":\"${ns#*:}\"}}}" >/dev/null
done
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cond(){ echo "{\"type\":\"$1\",\"status\":\"$2\",\"reason\":\"$3\",\"message\":\"$4\",\"lastTransitionTime\":\"$now\",\"observedGeneration\":${5:-0}}"; }
# The TenantGateways' status as the controller last wrote it.
tgw_status(){ # ns listeners...
  local ns=$1; shift
  kubectl patch tenantgateways.gateway.cozystack.io -n "$ns" cozystack --subresource=status --type=merge --field-manager=$REF -p "{\"status\":{
    \"observedGeneration\":1,\"conditions\":[$(cond Ready True Reconciled "Gateway $ns/cozystack programmed with $# listeners" 1)],
    \"listeners\":[$(IFS=,; echo "$*")]}}" >/dev/null
}
l(){ echo "{\"name\":\"$1\",\"ready\":true${2:+,\"hostname\":\"$2\"}${3:+,\"certificateName\":\"$3\"}}"; }
tgw_status mig-http "$(l http)" "$(l https-api-9b3eece6 api.mig-http.example cozystack-api-9b3eece6-tls)" "$(l https-app-32a1e6c7 app.alice.mig-http.example cozystack-app-32a1e6c7-tls)" \
  "$(l https-dash-3696db18 dash.mig-http.example cozystack-dash-3696db18-tls)" "$(l https-www-a2f1ec61 www.mig-http.example cozystack-www-a2f1ec61-tls)" \
  "$(l tls-api api.mig-http.example)"
tgw_status mig-dns "$(l http)" "$(l https '*.mig-dns.example' cozystack-gateway-tls)" "$(l https-apex mig-dns.example cozystack-gateway-tls)" \
  "$(l https-child-bob-328277ce '*.bob.mig-dns.example' cozystack-gateway-tls)"
# Route status under the controller's controllerName (http01 only: it
# writes none in dns01), next to an entry of the Gateway's own controller
# that the migration must leave alone.
route_status(){ # kind ns name accepted reason message [sectionName]
  local ref="{\"name\":\"cozystack\",\"namespace\":\"mig-http\"${7:+,\"sectionName\":\"$7\"}}"
  kubectl patch "$1.gateway.networking.k8s.io" -n "$2" "$3" --subresource=status --type=merge --field-manager=$REF -p "{\"status\":{\"parents\":[
    {\"parentRef\":$ref,\"controllerName\":\"io.cilium/gateway-controller\",\"conditions\":[$(cond Accepted True Accepted "Accepted route")]},
    {\"parentRef\":$ref,\"controllerName\":\"gateway.cozystack.io/tenantgateway-controller\",\"conditions\":[$(cond Accepted "$4" "$5" "$6")]}]}}" >/dev/null
}
attached="Route attached to TenantGateway mig-http/cozystack"
for r in mig-http/www mig-http-dash/dash mig-http-alice/app; do route_status httproutes "${r%/*}" "${r#*/}" True Accepted "$attached"; done
route_status tlsroutes mig-http api True Accepted "$attached" tls-api
route_status httproutes mig-http-alice steal False HostnameConflict "Hostname(s) www.mig-http.example already claimed by another route on TenantGateway mig-http/cozystack"
# What the test compares against, taken before anything of ours ran. Not
# the private key cert-manager keeps in a Secret of its own while it issues
# mig-dns's certificate (labelled cert-manager.io/next-private-key): it
# deletes it once the certificate is issued.
kubectl get namespaces,tenantgateways,gateways,issuers,certificates,httproutes,tlsroutes,secrets -A -o json \
  | jq '.items |= map(select(((.metadata.namespace // .metadata.name) | startswith("mig-"))
      and .metadata.labels["cert-manager.io/next-private-key"] != "true"))' > "${E2E_DIR:?}/run/reference-state.json"
echo "seeded a Cozystack platform: the controller's release, mig-http (http01) and mig-dns (dns01, issuing for real)"

# docs/migration.md, steps 2 and 3 (freeze the controller's release, stop
# the controller; the pre-flight of step 1 runs in the test, with the
# identity and policies the takeover meets) and 4. Step 5 has no chart on
# Cozystack today: the release stays suspended and keeps rendering the CRD.
kubectl -n cozy-system patch helmrelease cozystack-controller --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
kubectl -n cozy-system scale deployment cozystack-controller --replicas=0 >/dev/null
bash "$ROOT/hack/migrate-from-cozystack.sh" prepare
