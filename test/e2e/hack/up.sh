#!/bin/bash
# Brings up the end-to-end control plane on loopback, as plain processes whose
# PIDs down.sh uses to stop them:
#   etcd (Debian etcd-server), kube-apiserver and kube-controller-manager
#   v1.35.8, a loopback OCI registry, Crossplane core v2.4.0 out of cluster
#   (its default Deployment package runtime, for providers and functions),
#   the function and provider-kubernetes from the Deployments Crossplane
#   creates, and Envoy Gateway's controller (envoy-gateway.sh), and a real
#   issuer: BIND 9, Pebble and cert-manager's ACME controllers (tls.sh).
# Then it installs what a platform installs: the Gateway API (standard) and
# cert-manager CRDs from the Go module cache, and our packages the way a user
# does: `crossplane xpkg push` to the registry, the manifests of
# examples/cluster/ in docs/install.md's order, with the mirror variant of
# examples/cluster/mirror/ pointed at the loopback registry (an air-gapped
# install), and `crossplane xpkg install configuration` alone, so Crossplane
# resolves the Function and provider-kubernetes as dependencies for real.
#
# What the harness does that a cluster would do itself, since no kubelet runs
# here: it plays the kubelet of the two Deployments Crossplane creates. The
# provider's: its binary with that Deployment's service account (a token
# requested for it, in a mount namespace of its own), arguments and
# environment. The function's: the image the Deployment names, pulled from
# the registry and unpacked, its entrypoint with the Deployment's arguments
# and environment and the TLS Secret Crossplane generated mounted where the
# Deployment says, in a pod network namespace of its own; and the DNS of the
# function's Service, which Crossplane dials (run/hosts). It reports each
# pod ready. Crossplane runs with a token of its service account and the
# role of its Helm chart plus examples/cluster/crossplane-rbac.yaml, so RBAC
# and the admission policies see the identities they see in a cluster.
#
# Run through `make e2e` or `make e2e-up`, which build the binaries and set
# the variables below.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
R=${E2E_DIR:?}
: "${KUBE_APISERVER:?}" "${KUBE_CONTROLLER_MANAGER:?}" "${KUBECTL:?}" "${CROSSPLANE_CORE:?}" "${CROSSPLANE:?}" "${REGISTRY:?}"
: "${PROVIDER_KUBERNETES:?}" "${ENVOY_GATEWAY:?}" "${CERT_MANAGER:?}" "${PEBBLE:?}" "${XPKG_DIR:?}" "${VERSION:?}" "${XPKG_ARCHS:?}" "${XPKG_INDEX:?}"
P=$R/pki; S=$R/run; L=$R/logs
export KUBECONFIG=$P/kubeconfig
mkdir -p "$S/bin" "$L"
# kubectl at the control plane's version (built with it), ahead of any other.
ln -sf "$KUBECTL" "$S/bin/kubectl"; export PATH="$S/bin:$PATH"
t0=$(date +%s); ts(){ echo "[+$(( $(date +%s)-t0 ))s] $*"; }
PREFIX=e2e-up; . "$ROOT/hack/lib.sh"
for t in etcd etcdctl openssl curl jq unshare nsenter chroot ip; do command -v $t >/dev/null || fail "$t is missing (apt-get install etcd-server etcd-client openssl curl jq util-linux coreutils iproute2)"; done
ports_free 2379 2380 2381 6443 10257 5000 8080 9443 18080 18081 18082

# --- PKI: cluster CA, API server serving cert, admin client certs, SA keys ---
if [ ! -f "$P/ca.crt" ]; then
  mkdir -p "$P" && cd "$P"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=e2e-ca" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' > apiserver.ext
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile apiserver.ext 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cd "$ROOT"
fi
# The administrators, as kubeadm (1.29 and later) makes them: the user of
# admin.conf, in the group kubeadm:cluster-admins, which is bound to
# cluster-admin (below) and not in system:masters; it is the kubeconfig the
# tests, the install and everything a person runs here use, so the
# admission policies see an administrator outside system:masters
# (examples/cluster/trusted-callers.yaml). super-admin.conf's user, in
# system:masters, only creates that binding and runs the controller
# manager and the RBAC manager, which a cluster runs under identities of
# their own.
admin_cert(){ # name, subject -> name.crt, name.key and a kubeconfig of that user
  [ -f "$P/$1.crt" ] && return 0
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > "$P/client.ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$P/$1.key" -out "$P/$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -out "$P/$1.crt" -days 3650 -extfile "$P/client.ext" 2>/dev/null
  cat > "$P/$3" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$P/ca.crt"}
users:
- name: $1
  user: {client-certificate: "$P/$1.crt", client-key: "$P/$1.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $1}
current-context: e2e
KC
}
admin_cert super-admin "/O=system:masters/CN=kubernetes-super-admin" super-admin.kubeconfig
admin_cert kubeadm-admin "/O=kubeadm:cluster-admins/CN=kubernetes-admin" kubeconfig
if [ ! -f "$P/provider.crt" ]; then
  # Serving cert of provider-kubernetes' webhook server, which it will not
  # start without (it registers a conversion webhook).
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$P/serving.ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$P/provider.key" -out "$P/provider.csr" -subj "/CN=provider-kubernetes" 2>/dev/null
  openssl x509 -req -in "$P/provider.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -out "$P/provider.crt" -days 3650 -extfile "$P/serving.ext" 2>/dev/null
fi

# --- etcd, kube-apiserver, kube-controller-manager (GC, namespace deletion) ---
bg etcd etcd --name e2e --data-dir "$S/etcd-data" --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster e2e=http://127.0.0.1:2380 \
  --listen-metrics-urls http://127.0.0.1:2381
waitfor 30 etcdctl --endpoints=http://127.0.0.1:2379 endpoint health || fail "etcd did not become healthy"; ts "etcd"
bg kube-apiserver "$KUBE_APISERVER" --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --secure-port=6443 --advertise-address=127.0.0.1 \
  --cert-dir="$S/apiserver-certs" --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.0.0.0/24 --authorization-mode=RBAC --allow-privileged=true --endpoint-reconciler-type=none --profiling=false --v=1
waitfor 90 kubectl get --raw /readyz || fail "kube-apiserver did not become ready"; ts "kube-apiserver"
# What kubeadm init does with super-admin.conf: bind the administrators'
# group to cluster-admin. Then the admin kubeconfig can do everything.
KUBECONFIG="$P/super-admin.kubeconfig" kubectl create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin --group=kubeadm:cluster-admins \
  --dry-run=client -o yaml | KUBECONFIG="$P/super-admin.kubeconfig" kubectl apply -f - >/dev/null || fail "cannot bind kubeadm:cluster-admins to cluster-admin"
waitfor 30 sh -c '[ "$(kubectl auth can-i "*" "*" --all-namespaces)" = yes ]' || fail "the admin (kubeadm:cluster-admins) is not a cluster-admin"
bg kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$P/super-admin.kubeconfig" --authentication-kubeconfig="$P/super-admin.kubeconfig" --authorization-kubeconfig="$P/super-admin.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10257 --cert-dir="$S/kcm-certs" --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" --service-cluster-ip-range=10.0.0.0/24 --leader-elect=false --v=1
# Every controller runs, the Deployment and ReplicaSet ones included: they
# create the pods of Envoy Gateway's proxies and of the provider, which no
# kubelet runs; the harness plays the kubelet for the provider's pod (below)
# and the tests for the proxies' (kubelet_test.go).

# --- the loopback registry, and our packages pushed to it ---
bg registry "$REGISTRY" --address=127.0.0.1:5000 --dir="$S/registry"
waitfor 30 curl -sf http://127.0.0.1:5000/v2/ || fail "the registry did not start"
# provider-kubernetes: its package metadata and CRDs from the Go module
# cache, without a runtime image (no kubelet pulls one here), pushed under
# the project's own source, where a release republishes the upstream
# package (the Configuration's dependency, docs/design.md, Packages).
PKUBE_DIR=$(go -C "$ROOT/test/e2e/tools/provider-kubernetes" list -m -f '{{.Dir}}' github.com/crossplane-contrib/provider-kubernetes)
PKUBE_VERSION=$(go -C "$ROOT/test/e2e/tools/provider-kubernetes" list -m -f '{{.Version}}' github.com/crossplane-contrib/provider-kubernetes)
mkdir -p "$S/pkg"
"$CROSSPLANE" xpkg build --package-root="$PKUBE_DIR/package" --examples-root="$S/pkg/no-examples" \
  --package-file="$S/pkg/provider-kubernetes-$PKUBE_VERSION.xpkg" >> "$L/xpkg.log" 2>&1 || fail "cannot build the provider-kubernetes package (see xpkg.log)"
push(){ "$CROSSPLANE" xpkg push -f "$1" "$2" >> "$L/xpkg.log" 2>&1 || fail "cannot push $2 (see xpkg.log)"; }
push "$S/pkg/provider-kubernetes-$PKUBE_VERSION.xpkg" "127.0.0.1:5000/cozystack/tenant-gateway-provider-kubernetes:$PKUBE_VERSION"
# The Function as a release publishes it: one package per architecture
# pushed at once (-f with the files comma-separated), which xpkg push writes
# as a multi-platform index under the tag. xpkg-index then checks that the
# registry serves an index with one entry per architecture, each holding the
# package layer and a /function built for it. Crossplane pulls the
# linux/amd64 entry whatever the host (go-containerregistry's default
# platform); a node's runtime would pull its own.
fn_files=(); fn_platforms=()
for a in $XPKG_ARCHS; do fn_files+=("$XPKG_DIR/function-tenant-gateway-$VERSION-$a.xpkg"); fn_platforms+=("linux/$a"); done
push "$(IFS=,; echo "${fn_files[*]}")" "127.0.0.1:5000/cozystack/function-tenant-gateway:$VERSION"
"$XPKG_INDEX" --ref="127.0.0.1:5000/cozystack/function-tenant-gateway:$VERSION" --platforms="$(IFS=,; echo "${fn_platforms[*]}")" >> "$L/xpkg.log" 2>&1 \
  || fail "the pushed function index is wrong: $(tail -n 1 "$L/xpkg.log")"
push "$XPKG_DIR/configuration-tenant-gateway-$VERSION.xpkg" "127.0.0.1:5000/cozystack/configuration-tenant-gateway:$VERSION"
push "$XPKG_DIR/configuration-tenant-gateway-tenant-$VERSION.xpkg" "127.0.0.1:5000/cozystack/configuration-tenant-gateway-tenant:$VERSION"
ts "registry: provider-kubernetes $PKUBE_VERSION, function ($(IFS=,; echo "${fn_platforms[*]}")) and configurations $VERSION pushed"

# --- the CRDs a platform brings: Gateway API standard channel, cert-manager ---
GW_DIR=$(go -C "$ROOT" list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)
CM_DIR=$(go -C "$ROOT" list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
for f in "$GW_DIR"/config/crd/standard/*.yaml "$CM_DIR"/deploy/crds/*.yaml; do
  case $f in *.yaml) grep -q '^kind: CustomResourceDefinition' "$f" || continue;; esac
  kubectl apply --server-side --field-manager=e2e -f "$f" >/dev/null || fail "cannot apply $f"
done
kubectl wait crd --all --for=condition=Established --timeout=60s >/dev/null; ts "Gateway API and cert-manager CRDs"
# Envoy Gateway, the Gateway API implementation the tests name.
bash "$ROOT/test/e2e/hack/envoy-gateway.sh"; ts "envoy-gateway"
# A real issuer: BIND 9 for the test zone, Pebble and
# cert-manager's ACME controllers.
bash "$ROOT/test/e2e/hack/tls.sh"; ts "named, pebble, cert-manager"

# --- identities: Crossplane runs as its service account; provider-kubernetes
# as the one Crossplane gives its Deployment (below) ---
kubectl get ns crossplane-system >/dev/null 2>&1 || kubectl create ns crossplane-system >/dev/null
kubeconfig_for(){ # SA -> a kubeconfig with a bound token, as a pod would get
  local token; token=$(kubectl -n crossplane-system create token "$1" --duration=24h)
  cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: "$(base64 -w0 < "$P/ca.crt")"}
users:
- name: $1
  user: {token: "$token"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $1}
current-context: e2e
KC
}
kubectl -n crossplane-system create sa crossplane --dry-run=client -o yaml | kubectl apply -f - >/dev/null
# Crossplane runs with the role its Helm chart gives it: the chart's
# ClusterRole template (static but for the name and labels) aggregating every
# ClusterRole labelled rbac.crossplane.io/aggregate-to-crossplane, which
# includes our examples/cluster/crossplane-rbac.yaml and the roles the RBAC
# manager writes for our XRDs (below). So that file is tested for real.
XP_DIR=$(go -C "$ROOT/package/tools/core" list -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2)
sed -e 's/{{ template "crossplane.name" . }}/crossplane/' -e '/{{-/d' "$XP_DIR/cluster/charts/crossplane/templates/clusterrole.yaml" \
  | kubectl apply -f - >/dev/null || fail "cannot apply Crossplane's ClusterRole from its chart"
kubectl create clusterrolebinding crossplane --clusterrole=crossplane --serviceaccount=crossplane-system:crossplane --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -f "$ROOT/examples/cluster/crossplane-rbac.yaml" >/dev/null
kubeconfig_for crossplane > "$S/crossplane.kubeconfig"

# --- Crossplane core, out of cluster ---
# Its per-XR circuit breaker is raised (defaults: a burst of 100 tokens, one
# more a second; an update event costs 2): a route that adds or removes a
# listener costs its TenantGateway 20 to 26 (docs/benchmarks.md, A route change), so with
# the defaults the tests' bursts of route changes open it and later changes
# wait for the TTL. TestCallsPerRouteChange measures the tokens per change.
mkdir -p "$S/crds" && cp "$XP_DIR"/cluster/crds/*.yaml "$S/crds/"
for i in 1 2 3 4 5; do # the first run can race the Lock CRD into the RESTMapper
  if env KUBECONFIG="$S/crossplane.kubeconfig" CRDS_PATH="$S/crds" ENABLE_WEBHOOKS=false TLS_CA_SECRET_NAME=crossplane-root-ca \
    TLS_CLIENT_SECRET_NAME=crossplane-tls-client "$CROSSPLANE_CORE" core init >> "$L/crossplane-init.log" 2>&1; then break; fi
  [ "$i" = 5 ] && fail "crossplane core init failed (see crossplane-init.log)"
  sleep 2
done; ts "crossplane init"
mkdir -p "$S/xp-client-certs" "$S/provider-certs" "$S/xpkg-cache"
for k in ca.crt tls.crt tls.key; do kubectl -n crossplane-system get secret crossplane-tls-client -o jsonpath="{.data.${k//./\\.}}" | base64 -d > "$S/xp-client-certs/$k"; done
for k in crt key; do cp "$P/provider.$k" "$S/provider-certs/tls.$k"; done
# (Not in the coexist pass: there the platform's Provider provider-kubernetes
# gets a TLS Secret of this name from Crossplane.)
[ "${E2E_COEXIST:-0}" = 1 ] || kubectl -n crossplane-system create secret generic provider-kubernetes-tls-server --from-file=tls.crt="$P/provider.crt" --from-file=tls.key="$P/provider.key" \
  --from-file=ca.crt="$P/ca.crt" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
# make scale varies what the steady state costs (docs/benchmarks.md):
# CROSSPLANE_POLL, CROSSPLANE_FLAGS (more flags), FUNCTION_TTL, PROVIDER_POLL,
# PROVIDER_SYNC, and E2E_DEBUG (empty: no --debug for Crossplane and the
# function, as in production). CROSSPLANE_SETTINGS=default runs Crossplane
# at its own defaults (poll 1m, circuit breaker 100 tokens refilled at 1/s),
# as a cluster that follows none of our advice does (make e2e's third pass).
case ${CROSSPLANE_SETTINGS:=harness} in
  harness) xp_settings=(--poll-interval="${CROSSPLANE_POLL:-15s}" --circuit-breaker-burst=2000 --circuit-breaker-refill-rate=20);;
  default) xp_settings=();;
  *) fail "CROSSPLANE_SETTINGS=$CROSSPLANE_SETTINGS: allowed values are harness and default";;
esac
# Crossplane dials a function at the endpoint its Deployment runtime writes
# in the FunctionRevision, dns:///<Service>.<namespace>:9443 (the function's
# headless Service), resolved by gRPC's DNS resolver through the host's
# resolver. In a cluster CoreDNS answers with the Ready pods' IPs; here
# Crossplane runs in a mount namespace of its own whose /etc/hosts is
# run/hosts, to which the harness adds the addresses of the Service's
# EndpointSlice (below), as CoreDNS would serve them.
cp /etc/hosts "$S/hosts"
KUBECONFIG="$S/crossplane.kubeconfig" POD_NAMESPACE=crossplane-system TLS_CLIENT_CERTS_DIR="$S/xp-client-certs" \
  bg crossplane unshare -m --propagation private sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$S/hosts" \
  "$CROSSPLANE_CORE" core start ${E2E_DEBUG---debug} --enable-webhooks=false --cache-dir="$S/xpkg-cache" \
  --metrics-port=18080 --health-probe-port=18081 "${xp_settings[@]}" ${CROSSPLANE_FLAGS-}
waitfor 60 curl -sf http://127.0.0.1:18081/readyz || fail "crossplane did not become ready"; ts "crossplane"

# The RBAC manager writes the ClusterRoles that let Crossplane manage the XRs
# and claims of the XRDs the Configuration brings (Crossplane cannot
# establish an XRD without them), and binds provider-kubernetes' own CRDs to
# the service account of the provider's Deployment. It runs only until it has
# (below): it and provider-kubernetes both bind metrics to :8080, with no
# flag to move either.
KUBECONFIG="$P/super-admin.kubeconfig" POD_NAMESPACE=crossplane-system bg rbac-manager "$CROSSPLANE_CORE" rbac start

# --- optional, before our packages: E2E_BEFORE_INSTALL (the Makefile's is
# reference-seed.sh, which leaves the cluster as the Cozystack controller
# would for the migration test) ---
if [ -n "${E2E_BEFORE_INSTALL:-}" ]; then bash "$E2E_BEFORE_INSTALL" || fail "$E2E_BEFORE_INSTALL failed"; ts "before install: $(basename "$E2E_BEFORE_INSTALL")"; fi

# --- install, in the order of docs/install.md ---
# First what the platform had made for a provider-kubernetes of its own
# (test/e2e/testdata/platform-runtime.yaml), which the install must leave
# as it is.
kubectl apply -f "$ROOT/test/e2e/testdata/platform-runtime.yaml" >/dev/null || fail "cannot apply test/e2e/testdata/platform-runtime.yaml"
# Install step 1 (our_runtime): before the Configuration, provider-kubernetes'
# runtime (the service account it runs as, through an ImageConfig) and its
# RBAC, and the mirror variant of examples/cluster/mirror/ with its
# placeholder replaced by the loopback registry, as docs/install.md tells an
# air-gapped platform to do; and the function's flags.
our_runtime(){
kubectl apply -f "$ROOT/examples/cluster/provider-kubernetes-runtime.yaml" >/dev/null || fail "cannot apply examples/cluster/provider-kubernetes-runtime.yaml"
# The order ledger's role lives in cert-manager's namespace, which a
# platform's cert-manager install makes; here cert-manager runs as plain
# processes, so the namespace is made for it.
kubectl create namespace cozy-cert-manager --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -f "$ROOT/examples/cluster/order-ledger-rbac.yaml" >/dev/null || fail "cannot apply examples/cluster/order-ledger-rbac.yaml"
sed 's#registry.example.internal/#127.0.0.1:5000/#' "$ROOT/examples/cluster/mirror/image-configs.yaml" | kubectl apply -f - >/dev/null \
  || fail "cannot apply examples/cluster/mirror/image-configs.yaml"
# The function's flags, as docs/operations.md (Settings per platform size) tells a platform to set
# them: a DeploymentRuntimeConfig, here given to the dependency-installed
# Function by a runtime ImageConfig of its (mirrored) source. The tests read
# its debug log (calls per XR) and wait in units of its TTL.
# FN_REPLICAS (1) is the Deployment's replicas, which Crossplane's runtime
# takes from the template (TestFunctionReplicas runs with 2).
fn_flags=(${E2E_DEBUG---debug} --ttl="${FUNCTION_TTL:-10s}")
FN_REPLICAS=${FN_REPLICAS:-1}
[[ $FN_REPLICAS =~ ^[1-4]$ ]] || fail "FN_REPLICAS=$FN_REPLICAS: allowed values are 1 to 4"
kubectl apply -f - >/dev/null <<YAML || fail "cannot apply the function's runtime config"
apiVersion: pkg.crossplane.io/v1beta1
kind: DeploymentRuntimeConfig
metadata:
  name: e2e-function-tenant-gateway
spec:
  deploymentTemplate:
    spec:
      replicas: $FN_REPLICAS
      selector: {}
      template:
        spec:
          containers:
          - name: package-runtime
            args: $(printf '%s\n' "${fn_flags[@]}" | jq -R . | jq -sc .)
---
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: e2e-function-tenant-gateway-runtime
spec:
  matchImages:
  - {type: Prefix, prefix: "127.0.0.1:5000/cozystack/function-tenant-gateway:"}
  - {type: Prefix, prefix: "127.0.0.1:5000/cozystack/function-tenant-gateway@"}
  runtime:
    configRef: {name: e2e-function-tenant-gateway}
YAML
}
# --- provider-kubernetes: the Deployment Crossplane creates, run out of cluster ---
# Crossplane's Deployment runtime creates the provider's service account and
# Deployment from the DeploymentRuntimeConfig the ImageConfig selected, and
# the RBAC manager binds the provider's own CRDs to that account.
deploy_of(){ kubectl -n crossplane-system get deploy -o json | jq -r --arg o "$1" '.items[] | select(any(.metadata.ownerReferences[]?; .name == $o)) | .metadata.name'; }
has_deploy(){ [ -n "$(deploy_of "$1")" ]; }
# provider_deployment REV: the Deployment Crossplane created for provider
# revision REV (DEPLOY, written to run/provider-deployment.json) and its
# service account (SA), once the RBAC manager has bound that account.
provider_deployment(){
  local PREV=$1
  waitfor 120 has_deploy "$PREV" \
    || fail "Crossplane created no Deployment for $PREV: $(kubectl get providerrevision "$PREV" -o jsonpath='{.status.conditions}')"
  DEPLOY=$(deploy_of "$PREV")
  kubectl -n crossplane-system get deploy "$DEPLOY" -o json > "$S/provider-deployment.json"
  SA=$(jq -r '.spec.template.spec.serviceAccountName' "$S/provider-deployment.json")
  waitfor 60 sh -c "kubectl get clusterrolebinding 'crossplane:provider:$PREV:system' -o jsonpath='{.subjects[*].name}' | grep -qw '$SA'" \
    || fail "the RBAC manager did not bind the provider's system role to $SA"
  # The binding and the role it names are written by two controllers of the
  # RBAC manager, in either order: stopping it between them leaves the
  # provider forbidden everything (its caches never sync).
  waitfor 60 kubectl get clusterrole "crossplane:provider:$PREV:system" \
    || fail "the RBAC manager wrote no system role for $PREV"
}
# stop_proc NAME stops a process bg started; stop_rbac the RBAC manager.
stop_proc(){ local p; p=$(cat "$S/$1.pid"); kill "$p"; for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.5; done; kill -9 "$p"; }
stop_rbac(){ stop_proc rbac-manager; }
# The environment as the kubelet resolves it: the namespace and labels the
# pod would have for field references, $(VAR) for earlier variables.
deploy_vars(){ jq -r '.metadata.namespace as $ns | .spec.template.metadata.labels as $lbl
  | reduce (.spec.template.spec.containers[0].env[]?) as $e ({}; . as $env | . + {($e.name): (
      if $e.valueFrom then ($e.valueFrom.fieldRef.fieldPath // "") as $f
        | if $f == "metadata.namespace" then $ns
          elif ($f | test("^metadata\\.labels\\[\u0027[^\u0027]+\u0027\\]$")) then $lbl[$f | capture("\\[\u0027(?<k>[^\u0027]+)\u0027\\]").k]
          else error("env \($e.name) reads \($e.valueFrom), which the harness does not provide") end
      else ($e.value // "") | gsub("\\$\\((?<n>[A-Za-z_][A-Za-z0-9_]*)\\)"; $env[.n] // "$(\(.n))") end)})
  | to_entries[] | "\(.key)=\(.value)"' "$1"; }
start_rbac(){ KUBECONFIG="$P/super-admin.kubeconfig" POD_NAMESPACE=crossplane-system bg rbac-manager "$CROSSPLANE_CORE" rbac start; }
# The kubelet's report, the least of it: the pod the ReplicaSet controller
# made from Crossplane's Deployment is running and ready (its process is the
# one above). The ReplicaSet and Deployment controllers then count it
# available, and Crossplane's runtime marks the revision healthy.
pods_of(){ kubectl -n crossplane-system get pods -l "$(jq -r '.spec.selector.matchLabels | to_entries | map("\(.key)=\(.value)") | join(",")' "$1")" -o name; }
has_pod(){ [ -n "$(pods_of "$1")" ]; }
# report_ready POD [IP]: the pod is running and ready, with its IP if it has
# a network of its own.
report_ready(){
  local now ip=""; now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  [ -n "${2:-}" ] && ip=",\"podIP\":\"$2\",\"podIPs\":[{\"ip\":\"$2\"}]"
  kubectl -n crossplane-system patch "$1" --subresource=status --type=merge -p "{\"status\":{\"phase\":\"Running\",\"startTime\":\"$now\"$ip,\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"},{\"type\":\"ContainersReady\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"},{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
}
# start_provider: the pod of the Deployment provider_deployment read, run as
# the kubelet would, and reported running and ready.
start_provider(){
  # What the kubelet would give the pod: a token requested for exactly the
  # Deployment's service account with the cluster CA and namespace, at the path
  # client-go's in-cluster config reads (the example's ProviderConfigs use
  # InjectedIdentity), the API server's address, and each secret volume.
  mkdir -p "$S/provider-sa" "$S/provider-volumes"
  kubectl -n crossplane-system create token "$SA" --duration=24h > "$S/provider-sa/token"
  cp "$P/ca.crt" "$S/provider-sa/ca.crt"; printf crossplane-system > "$S/provider-sa/namespace"
  provider_env=(PATH=/usr/sbin:/usr/bin:/sbin:/bin KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=6443)
  declare -A mounted=()
  while IFS=$'\t' read -r vol secret path; do
    mkdir -p "$S/provider-volumes/$vol"
    kubectl -n crossplane-system get secret "$secret" -o json | jq -r '.data | to_entries[] | "\(.key)\t\(.value)"' \
      | while IFS=$'\t' read -r k v; do printf %s "$v" | base64 -d > "$S/provider-volumes/$vol/$k"; done
    mounted[$path]="$S/provider-volumes/$vol"
  done < <(jq -r '.spec.template.spec as $s | $s.containers[0].volumeMounts[]? | .name as $n | ($s.volumes[] | select(.name == $n) | .secret.secretName) as $sec | "\($n)\t\($sec)\t\(.mountPath)"' "$S/provider-deployment.json")
  vars=$(deploy_vars "$S/provider-deployment.json") || fail "cannot read the provider's environment from Deployment $DEPLOY"
  while IFS= read -r kv; do
    name=${kv%%=*} value=${kv#*=}
    # Only paths change: a mounted volume lives under the run folder, not at
    # its mount path (the mount namespace below covers the service account).
    [ -n "${mounted[$value]:-}" ] && value=${mounted[$value]}
    provider_env+=("$name=$value")
  done <<< "$vars"
  mapfile -t provider_args < <(jq -r '.spec.template.spec.containers[0].args[]?' "$S/provider-deployment.json")
  # Two substitutions, since every process here shares one network namespace:
  # the health probe moves off :8081, and the poll and sync periods shorten to
  # what the tests' timeouts allow (docs/development.md lists both).
  # PROVIDER_POLL and PROVIDER_SYNC override them (make scale, docs/benchmarks.md).
  provider_env+=(HEALTH_PROBE_BIND_ADDRESS=127.0.0.1:18082)
  provider_args+=(--poll="${PROVIDER_POLL:-15s}" --sync="${PROVIDER_SYNC:-1m}")
  echo "provider-kubernetes as $SA: args ${provider_args[*]}; env ${provider_env[*]}" > "$L/provider-kubernetes-runtime.log"
  bg provider-kubernetes env -i "${provider_env[@]}" unshare -m --propagation private sh -c \
    'mount -t tmpfs -o size=1m tmpfs /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && mount --bind "$0" /run/secrets/kubernetes.io/serviceaccount && exec "$@"' \
    "$S/provider-sa" "$PROVIDER_KUBERNETES" "${provider_args[@]}"
  waitfor 60 curl -sf http://127.0.0.1:18082/readyz || fail "provider-kubernetes did not become ready"
  waitfor 60 has_pod "$S/provider-deployment.json" || fail "the ReplicaSet controller made no pod for Deployment $DEPLOY"
  for pod in $(pods_of "$S/provider-deployment.json"); do report_ready "$pod" || fail "cannot report $pod ready"; done
  waitfor 60 kubectl -n crossplane-system wait deploy "$DEPLOY" --for=condition=Available --timeout=5s || fail "Deployment $DEPLOY did not become available"
}
revision(){ kubectl get "$1" -l "pkg.crossplane.io/package=$2" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }

if [ "${E2E_COEXIST:-0}" = 1 ]; then
  # Beside a provider-kubernetes another party installed and runs
  # (docs/install.md, "A cluster that already runs provider-kubernetes").
  . "$ROOT/test/e2e/hack/coexist.sh"
else
our_runtime
# The one install command of a platform without Cozystack: the Tenant API.
# Crossplane resolves the TenantGateway API's Configuration, the Function
# and provider-kubernetes as dependencies and names each after its
# repository (a Cozystack platform installs configuration-tenant-gateway
# alone, docs/install.md).
"$CROSSPLANE" xpkg install configuration "ghcr.io/cozystack/configuration-tenant-gateway-tenant:$VERSION" >> "$L/xpkg.log" 2>&1 \
  || fail "cannot install the Configuration (see xpkg.log)"
deps(){ kubectl get configuration cozystack-configuration-tenant-gateway -o jsonpath='{.status.conditions}'; }
waitfor 120 sh -c "kubectl get functionrevisions -l pkg.crossplane.io/package=cozystack-function-tenant-gateway -o name | grep -q ." \
  || fail "the Function dependency was not installed as cozystack-function-tenant-gateway: $(deps); $(kubectl get functions.pkg.crossplane.io)"
REV=$(revision functionrevisions cozystack-function-tenant-gateway)
ts "function revision $REV"
waitfor 120 sh -c "kubectl get providerrevisions -l pkg.crossplane.io/package=cozystack-tenant-gateway-provider-kubernetes -o name | grep -q ." \
  || fail "the provider-kubernetes dependency was not installed: $(deps)"
PREV=$(revision providerrevisions cozystack-tenant-gateway-provider-kubernetes)
waitfor 60 kubectl get clusterrole crossplane:composite:tenantgateways.gateway.cozystack.io:aggregate-to-crossplane \
  crossplane:composite:xtenants.apps.cozystack.io:aggregate-to-crossplane || fail "the RBAC manager wrote no roles for our XRDs"
kubectl wait xrd --all --for=condition=Established --timeout=60s >/dev/null || fail "the XRDs were not established: $(kubectl get xrd)"
# docs/install.md's wait before provider-kubernetes.yaml: the ProviderConfig CRDs
# come with the revision, the Object CRDs once the Configuration's activation
# policy activates them.
waitfor 120 kubectl wait crd providerconfigs.kubernetes.crossplane.io clusterproviderconfigs.kubernetes.m.crossplane.io \
  objects.kubernetes.crossplane.io objects.kubernetes.m.crossplane.io --for=condition=Established --timeout=5s \
  || fail "provider-kubernetes CRDs not established: $(kubectl get providerrevision "$PREV" -o jsonpath='{.status.conditions}'); $(kubectl get managedresourcedefinitions)"
# The platform's own provider configs named default, there before ours.
kubectl apply -f "$ROOT/test/e2e/testdata/platform-provider-configs.yaml" >/dev/null || fail "cannot apply test/e2e/testdata/platform-provider-configs.yaml"
kubectl apply -f "$ROOT/examples/cluster/provider-kubernetes.yaml" >/dev/null || fail "cannot apply examples/cluster/provider-kubernetes.yaml"
ts "provider revision $PREV"

provider_deployment "$PREV"
# The RBAC manager has written what this run needs. It and provider-kubernetes
# both bind metrics to :8080, with no flag to move either, so it stops here.
stop_rbac; ts "Deployment $DEPLOY runs as $SA; RBAC manager done"
start_provider
fi
# --- the function: the Deployment Crossplane creates, run as a kubelet would ---
# Crossplane v2.4's Deployment runtime (its default, for functions as for
# providers) gives the FunctionRevision a headless Service, a TLS server
# Secret its root CA signs for that Service's names, and a Deployment, sets
# the revision's endpoint to dns:///<Service>.<namespace>:9443 and reports
# the revision healthy once the Deployment is available. The harness plays
# the kubelet for that Deployment's pods (one unless FN_REPLICAS says more):
#   - the image: the one the Deployment names (the loopback registry's,
#     through the mirror ImageConfig), this node's platform out of its
#     index, every layer unpacked into a root filesystem, so what runs is
#     the /function the pushed package carries;
#   - the pod's network: a network namespace of its own, held by a pause
#     process as a pod sandbox is and joined to the control plane's by a
#     veth pair, with a pod IP of its own (10.244.0.2 for the first pod; one
#     per replica), so the function listens where
#     the Deployment says (gRPC :9443, metrics :8080) beside
#     provider-kubernetes' webhook on the host's :9443;
#   - the container: the image's entrypoint with the Deployment's command
#     and arguments, its environment, each secret volume (the TLS Secret
#     Crossplane generated) mounted at its mountPath in the root
#     filesystem, chrooted there as the pod's user;
#   - the report: the pod running and ready with its IP; the IPs of the
#     ready pods the Service selects are served for the Service's name in
#     Crossplane's /etc/hosts (run/hosts), as CoreDNS serves a headless
#     Service's.
fn_deploy(){ deploy_of "$REV"; }
has_fn_deploy(){ [ -n "$(fn_deploy)" ]; }
waitfor 120 has_fn_deploy || fail "Crossplane created no Deployment for $REV: $(kubectl get functionrevision "$REV" -o jsonpath='{.status.conditions}')"
FN_DEPLOY=$(fn_deploy)
kubectl -n crossplane-system get deploy "$FN_DEPLOY" -o json > "$S/function-deployment.json"
FN_IMAGE=$(jq -r '.spec.template.spec.containers[0].image' "$S/function-deployment.json")
# The image, as a container runtime pulls it from a registry that speaks
# plain HTTP (the loopback one).
pull_image(){ # reference, root filesystem folder -> the image config in $S/function-image-config.json
  local ref=$1 root=$2 host rest repo tag arch accept digest layer media
  host=${ref%%/*} rest=${ref#*/}
  if [[ $rest == *@* ]]; then repo=${rest%%@*} tag=${rest#*@}; elif [[ $rest == *:* ]]; then repo=${rest%:*} tag=${rest##*:}; else repo=$rest tag=latest; fi
  case $(uname -m) in x86_64) arch=amd64;; aarch64) arch=arm64;; *) arch=$(uname -m);; esac
  accept=application/vnd.oci.image.index.v1+json,application/vnd.docker.distribution.manifest.list.v2+json,application/vnd.oci.image.manifest.v1+json,application/vnd.docker.distribution.manifest.v2+json
  curl -sf -H "Accept: $accept" "http://$host/v2/$repo/manifests/$tag" > "$S/function-manifest.json" || return 1
  if jq -e '.manifests' "$S/function-manifest.json" >/dev/null; then
    digest=$(jq -r --arg a "$arch" '[.manifests[] | select(.platform.os == "linux" and .platform.architecture == $a)][0].digest // empty' "$S/function-manifest.json")
    [ -n "$digest" ] || { echo "$ref has no linux/$arch image" >&2; return 1; }
    curl -sf -H "Accept: $accept" "http://$host/v2/$repo/manifests/$digest" > "$S/function-manifest.json" || return 1
  fi
  curl -sf "http://$host/v2/$repo/blobs/$(jq -r .config.digest "$S/function-manifest.json")" > "$S/function-image-config.json" || return 1
  rm -rf "$root" && mkdir -p "$root"
  while IFS=$'\t' read -r layer media; do
    case $media in *gzip) curl -sf "http://$host/v2/$repo/blobs/$layer" | tar -xz -C "$root";;
                   *) curl -sf "http://$host/v2/$repo/blobs/$layer" | tar -x -C "$root";; esac || return 1
  done < <(jq -r '.layers[] | "\(.digest)\t\(.mediaType)"' "$S/function-manifest.json")
}
FN_ROOT=$S/function-rootfs
pull_image "$FN_IMAGE" "$FN_ROOT" || fail "cannot pull $FN_IMAGE, the image of Deployment $FN_DEPLOY"
# The command line, as the kubelet builds it: the container's command
# replaces the image's entrypoint, its args the image's cmd.
mapfile -t fn_cmd < <(jq -r '.spec.template.spec.containers[0] | if .command then .command[] else empty end' "$S/function-deployment.json")
mapfile -t fn_args < <(jq -r '.spec.template.spec.containers[0] | if .args then .args[] else empty end' "$S/function-deployment.json")
if [ ${#fn_cmd[@]} -eq 0 ]; then
  mapfile -t fn_cmd < <(jq -r '.config.Entrypoint[]?' "$S/function-image-config.json")
  [ ${#fn_args[@]} -eq 0 ] && mapfile -t fn_args < <(jq -r '.config.Cmd[]?' "$S/function-image-config.json")
fi
[ ${#fn_cmd[@]} -gt 0 ] || fail "Deployment $FN_DEPLOY and its image $FN_IMAGE give no command"
# The environment: the image's, then the Deployment's (which wins).
fn_env=()
mapfile -t -O ${#fn_env[@]} fn_env < <(jq -r '.config.Env[]?' "$S/function-image-config.json")
vars=$(deploy_vars "$S/function-deployment.json") || fail "cannot read the function's environment from Deployment $FN_DEPLOY"
[ -n "$vars" ] && mapfile -t -O ${#fn_env[@]} fn_env <<< "$vars"
# The volumes: each secret's keys (or its items) in a folder, bind-mounted
# at the mount path inside the root filesystem.
mkdir -p "$S/function-volumes"
{ echo 'set -e'
  while IFS=$'\t' read -r vol secret path; do
    [ -n "$secret" ] || fail "volume $vol of Deployment $FN_DEPLOY is not a secret, which the harness does not provide"
    mkdir -p "$S/function-volumes/$vol" "$FN_ROOT$path"
    kubectl -n crossplane-system get secret "$secret" -o json \
      | jq -r --argjson v "$(jq --arg n "$vol" '.spec.template.spec.volumes[] | select(.name == $n) | .secret' "$S/function-deployment.json")" \
        '.data as $d | if $v.items then $v.items[] | "\(.path)\t\($d[.key])" else $d | to_entries[] | "\(.key)\t\(.value)" end' \
      | while IFS=$'\t' read -r k v; do printf %s "$v" | base64 -d > "$S/function-volumes/$vol/$k"; done
    printf 'mount --bind %q %q\n' "$S/function-volumes/$vol" "$FN_ROOT$path"
  done < <(jq -r '.spec.template.spec as $s | $s.containers[0].volumeMounts[]? | .name as $n | ($s.volumes[] | select(.name == $n) | .secret.secretName // "") as $sec | "\($n)\t\($sec)\t\(.mountPath)"' "$S/function-deployment.json")
  user=$(jq -r '.spec.template.spec | (.containers[0].securityContext.runAsUser // .securityContext.runAsUser // 0 | tostring) + ":" + (.containers[0].securityContext.runAsGroup // .securityContext.runAsGroup // 0 | tostring)' "$S/function-deployment.json")
  printf 'exec chroot --userspec=%q %q' "$user" "$FN_ROOT"; printf ' %q' "${fn_cmd[@]}" "${fn_args[@]}"; echo
} > "$S/function-container.sh"
# Each pod the ReplicaSet controller made: its sandbox and network, its
# container, its report. Pod i (in the order of their names) has the IP
# 10.244.0.(4i+2) on a /30 of its own; the first one's process is
# `function` (run/function.pid, .sh, logs/function.log), the others'
# `function-<i>`.
has_fn_pods(){ [ "$(pods_of "$S/function-deployment.json" | wc -l)" -ge "$FN_REPLICAS" ]; }
waitfor 60 has_fn_pods || fail "the ReplicaSet controller made fewer than $FN_REPLICAS pods for Deployment $FN_DEPLOY"
mapfile -t fn_pods < <(pods_of "$S/function-deployment.json" | sort | head -n "$FN_REPLICAS")
fn_ips=()
for i in "${!fn_pods[@]}"; do
  name=function; [ "$i" -gt 0 ] && name=function-$i
  pod_ip=10.244.0.$((4 * i + 2)) host_ip=10.244.0.$((4 * i + 1)) link=e2e-fn$i
  bg "$name-pod" unshare -n sleep infinity
  pod_pid=$(cat "$S/$name-pod.pid")
  waitfor 10 sh -c "[ \"\$(readlink /proc/$pod_pid/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]" || fail "the function's pod $i has no network namespace of its own"
  ip link add "$link" type veth peer name eth0 netns "$pod_pid" || fail "cannot create the veth pair $link (is a control plane up in this network namespace?)"
  ip addr add "$host_ip/30" dev "$link" && ip link set "$link" up || fail "cannot address $link"
  nsenter -t "$pod_pid" -n sh -c "ip link set lo up && ip addr add $pod_ip/30 dev eth0 && ip link set eth0 up && ip route add default via $host_ip" \
    || fail "cannot set up the network of the function's pod $i"
  echo "$name (${fn_pods[$i]}, $pod_ip): $FN_IMAGE as $user; $(tail -n 1 "$S/function-container.sh"); env ${fn_env[*]}" >> "$L/function-runtime.log"
  bg "$name" nsenter -t "$pod_pid" -n -- env -i "${fn_env[@]}" unshare -m --propagation private sh "$S/function-container.sh"
  waitfor 60 bash -c "exec 3<>/dev/tcp/$pod_ip/9443" || fail "the function is not serving on $pod_ip:9443"
  report_ready "${fn_pods[$i]}" "$pod_ip" || fail "cannot report ${fn_pods[$i]} ready"
  fn_ips+=("$pod_ip")
done
# What Crossplane dials, and the Service's endpoints as DNS would serve them.
FN_ENDPOINT=$(kubectl get functionrevision "$REV" -o jsonpath='{.status.endpoint}')
FN_HOST=${FN_ENDPOINT#dns:///}; FN_HOST=${FN_HOST%:*}; FN_SVC=${FN_HOST%%.*}
[[ $FN_ENDPOINT == dns:///*.crossplane-system:9443 ]] || fail "FunctionRevision $REV's endpoint is $FN_ENDPOINT, not its Service's"
# The Service's endpoints: the ready pods its selector picks, as the
# EndpointSlice controller lists them for CoreDNS. That controller lists no
# pod here, since it skips pods of no registered Node and no kubelet
# registers one, so the harness reads the pods itself.
svc_ips(){ kubectl -n crossplane-system get pods -l "$(kubectl -n crossplane-system get service "$FN_SVC" -o json | jq -r '.spec.selector | to_entries | map("\(.key)=\(.value)") | join(",")')" -o json \
  | jq -r '[.items[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True")) | .status.podIP // empty] | unique | .[]'; }
has_svc_ips(){ [ "$(svc_ips | sort)" = "$(printf '%s\n' "${fn_ips[@]}" | sort)" ]; }
waitfor 60 has_svc_ips || fail "Service $FN_SVC does not select the ready pods at ${fn_ips[*]}: $(svc_ips | tr '\n' ' ')"
{ cat /etc/hosts; for ip in $(svc_ips); do echo "$ip $FN_HOST"; done; } > "$S/hosts"
waitfor 60 kubectl -n crossplane-system wait deploy "$FN_DEPLOY" --for=condition=Available --timeout=5s || fail "Deployment $FN_DEPLOY did not become available"
ts "function: Deployment $FN_DEPLOY, pods ${fn_ips[*]}, $FN_ENDPOINT"
for k in configurations providers functions; do
  kubectl wait "$k.pkg.crossplane.io" --all --for=condition=Healthy --timeout=120s >/dev/null || fail "$k not healthy: $(kubectl get "$k.pkg.crossplane.io" -o wide)"
done
ts "packages healthy"
echo "export KUBECONFIG=$KUBECONFIG"
