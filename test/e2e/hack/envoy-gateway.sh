#!/bin/bash
# Brings up Envoy Gateway's controller (envoy-gateway server) as one more
# plain process of the loopback control plane, after up.sh has started the
# API server; down.sh stops it by its PID like the others. Called by up.sh
# with its environment (E2E_DIR, ENVOY_GATEWAY, kubectl on PATH, KUBECONFIG).
#
# What its Helm chart would do, done here the least way (see docs/development.md, End to end):
# - CRDs: Envoy Gateway's own (gateway.envoyproxy.io) from its Go module;
#   the Gateway API CRDs stay those up.sh applies (standard channel v1.6.3,
#   which serves TLSRoute v1 that Envoy Gateway v1.9.1 watches).
# - the namespace envoy-gateway-system and the Secrets its certgen Job
#   makes: `envoy-gateway certgen` itself, run once.
# - the xDS server reads its TLS files from the fixed path /certs (a Secret
#   volume in its pod): the process runs in a private mount namespace with
#   the certgen Secret's files bind-mounted on /certs, and a state directory
#   on /var/lib/eg (its Wasm cache). Needs root (unshare -m); the only trace
#   on the host is the empty mount points, created if missing.
# - its ports: the topology-injector webhook (9443, provider-kubernetes')
#   is disabled in the config; controller-runtime's metrics server (8080,
#   provider-kubernetes') is off at link time (see the Makefile). Health
#   probe 8081, xDS 18000, Wasm 18002, admin 127.0.0.1:19000 and metrics
#   19001 listen as in a pod.
# - it runs as the admin, as provider-kubernetes' controller does, with
#   leader election as configured by default (a Lease in its namespace).
# It is not waited for here, so the rest of the control plane comes up
# meanwhile: the tests' setup waits for it to accept its GatewayClass.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
R=${E2E_DIR:?}; : "${ENVOY_GATEWAY:?}"
S=$R/run; L=$R/logs; D=$S/envoy-gateway; NS=envoy-gateway-system
PREFIX=envoy-gateway; . "$ROOT/hack/lib.sh"
ports_free 8081 18000 18002 19000 19001
[ "$(id -u)" = 0 ] || fail "must run as root: the controller reads its xDS certificates from /certs, mounted in a private mount namespace"

EG_DIR=$(go -C "$ROOT/test/e2e/tools/envoy-gateway" list -m -f '{{.Dir}}' github.com/envoyproxy/gateway)
# The chart's CRDs, as plain files (the same as the CRD chart's templates,
# charts/gateway-crds-helm, without their Helm conditionals).
kubectl apply --server-side --field-manager=e2e -f "$EG_DIR/charts/gateway-helm/charts/crds/crds/generated" >/dev/null || fail "cannot apply Envoy Gateway's CRDs"
kubectl wait crd --all --for=condition=Established --timeout=60s >/dev/null || fail "Envoy Gateway's CRDs were not established"
kubectl get ns "$NS" >/dev/null 2>&1 || kubectl create ns "$NS" >/dev/null

# The Secrets envoy-gateway, envoy, envoy-rate-limit and envoy-oidc-hmac,
# as the chart's certgen Job makes them; the controller reads the HMAC one
# through the API and envoy-gateway's files from /certs.
ENVOY_GATEWAY_NAMESPACE=$NS "$ENVOY_GATEWAY" certgen --disable-topology-injector >> "$L/envoy-gateway-certgen.log" 2>&1 \
  || fail "certgen failed (see envoy-gateway-certgen.log)"
mkdir -p "$D/certs" "$D/var-lib-eg"
for k in ca.crt tls.crt tls.key; do kubectl -n "$NS" get secret envoy-gateway -o jsonpath="{.data.${k//./\\.}}" | base64 -d > "$D/certs/$k"; done
cat > "$D/config.yaml" <<CFG
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyGateway
gateway:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
logging:
  level: {default: info}
provider:
  type: Kubernetes
  kubernetes:
    proxyTopologyInjector: {disabled: true}
CFG
mkdir -p /certs /var/lib/eg
# The start script, as up.sh's bg writes one: the fault tests restart the
# controller with it.
{ echo '#!/bin/bash'; export -p; printf 'ENVOY_GATEWAY_NAMESPACE=%q exec unshare -m sh -c %q sh %q %q server --config-path=%q\n' \
  "$NS" 'mount --bind "$1/certs" /certs && mount --bind "$1/var-lib-eg" /var/lib/eg && shift && exec "$@"' "$D" "$ENVOY_GATEWAY" "$D/config.yaml"; } > "$S/envoy-gateway.sh"
setsid nohup bash "$S/envoy-gateway.sh" > "$L/envoy-gateway.log" 2>&1 &
echo $! > "$S/envoy-gateway.pid"
# Only a start that fails at once (no unshare, a mount refused) is caught here.
sleep 1; kill -0 "$(cat "$S/envoy-gateway.pid")" 2>/dev/null || fail "envoy-gateway exited: $(tail -n 5 "$L/envoy-gateway.log")"
