#!/bin/bash
# Brings up the end-to-end control plane on loopback, as plain processes whose
# PIDs down.sh uses to stop them (after shared/notes/real-cluster.md):
#   etcd (Debian etcd-server), kube-apiserver and kube-controller-manager
#   v1.35.8, a loopback OCI registry, Crossplane core v2.4.0 out of cluster
#   (External package runtime), the function over mTLS and provider-kubernetes
#   out of cluster, and Envoy Gateway's controller (envoy-gateway.sh).
# Then it installs what a platform installs: the Gateway API (standard) and
# cert-manager CRDs from the Go module cache, and our packages the way a user
# does, `crossplane xpkg push` to the registry and `crossplane xpkg install`,
# with ImageConfigs that mirror ghcr.io/cozystack and
# xpkg.crossplane.io/crossplane-contrib to the loopback registry (an
# air-gapped install), so Crossplane resolves the Configuration's
# dependencies for real.
#
# What the harness does that a cluster would do itself, since no kubelet runs
# here: it plays the External package runtime (sets the FunctionRevision's
# endpoint and TLS secret, starts the provider), and it runs Crossplane and
# provider-kubernetes with service-account tokens, so RBAC and the admission
# policies see the identities they see in a cluster: Crossplane with the role
# of its Helm chart plus examples/cluster/crossplane-rbac.yaml.
#
# Run through `make e2e` or `make e2e-up`, which build the binaries and set
# the variables below.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
R=${E2E_DIR:?}
: "${KUBE_APISERVER:?}" "${KUBE_CONTROLLER_MANAGER:?}" "${KUBECTL:?}" "${CROSSPLANE_CORE:?}" "${CROSSPLANE:?}" "${REGISTRY:?}"
: "${PROVIDER_KUBERNETES:?}" "${ENVOY_GATEWAY:?}" "${FUNCTION_BIN:?}" "${XPKG_DIR:?}" "${VERSION:?}" "${XPKG_ARCHS:?}" "${XPKG_INDEX:?}"
P=$R/pki; S=$R/run; L=$R/logs
export KUBECONFIG=$P/kubeconfig
mkdir -p "$S/bin" "$L"
# kubectl at the control plane's version (built with it), ahead of any other.
ln -sf "$KUBECTL" "$S/bin/kubectl"; export PATH="$S/bin:$PATH"
t0=$(date +%s); ts(){ echo "[+$(( $(date +%s)-t0 ))s] $*"; }
bg(){ local name=$1; shift; setsid nohup "$@" > "$L/$name.log" 2>&1 & echo $! > "$S/$name.pid"; }
waitfor(){ local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done; echo "timeout after ${n}s: $*" >&2; return 1; }
fail(){ echo "e2e-up: $*" >&2; echo "logs: $L" >&2; exit 1; }
for t in etcd etcdctl openssl curl; do command -v $t >/dev/null || fail "$t is missing (apt-get install etcd-server etcd-client openssl curl)"; done
for port in 2379 2380 2381 6443 10257 5000 8080 9443 9444 18080 18081 18082; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then fail "port $port is in use: is another control plane up? (make e2e-down)"; fi
done

# --- PKI: cluster CA, API server serving cert, admin client cert, SA keys ---
if [ ! -f "$P/ca.crt" ]; then
  mkdir -p "$P" && cd "$P"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=e2e-ca" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' > apiserver.ext
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile apiserver.ext 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > client.ext
  openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=kube-admin" 2>/dev/null
  openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 3650 -extfile client.ext 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cat > kubeconfig <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$P/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$P/admin.crt", client-key: "$P/admin.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
KC
  cd "$ROOT"
fi
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
bg kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$P/kubeconfig" --authentication-kubeconfig="$P/kubeconfig" --authorization-kubeconfig="$P/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10257 --cert-dir="$S/kcm-certs" --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" --service-cluster-ip-range=10.0.0.0/24 --leader-elect=false --v=1

# --- the loopback registry, and our packages pushed to it ---
bg registry "$REGISTRY" --address=127.0.0.1:5000 --dir="$S/registry"
waitfor 30 curl -sf http://127.0.0.1:5000/v2/ || fail "the registry did not start"
# provider-kubernetes: its package metadata and CRDs from the Go module
# cache, without a runtime image (the External runtime runs no pod).
PKUBE_DIR=$(go -C "$ROOT/test/e2e/tools/provider-kubernetes" list -m -f '{{.Dir}}' github.com/crossplane-contrib/provider-kubernetes)
PKUBE_VERSION=$(go -C "$ROOT/test/e2e/tools/provider-kubernetes" list -m -f '{{.Version}}' github.com/crossplane-contrib/provider-kubernetes)
mkdir -p "$S/pkg"
"$CROSSPLANE" xpkg build --package-root="$PKUBE_DIR/package" --examples-root="$S/pkg/no-examples" \
  --package-file="$S/pkg/provider-kubernetes-$PKUBE_VERSION.xpkg" >> "$L/xpkg.log" 2>&1 || fail "cannot build the provider-kubernetes package (see xpkg.log)"
push(){ "$CROSSPLANE" xpkg push -f "$1" "$2" >> "$L/xpkg.log" 2>&1 || fail "cannot push $2 (see xpkg.log)"; }
push "$S/pkg/provider-kubernetes-$PKUBE_VERSION.xpkg" "127.0.0.1:5000/crossplane-contrib/provider-kubernetes:$PKUBE_VERSION"
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
ts "registry: provider-kubernetes $PKUBE_VERSION, function ($(IFS=,; echo "${fn_platforms[*]}")) and configuration $VERSION pushed"

# --- the CRDs a platform brings: Gateway API standard channel, cert-manager ---
GW_DIR=$(go -C "$ROOT" list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)
CM_DIR=$(go -C "$ROOT" list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
for f in "$GW_DIR"/config/crd/standard/*.yaml "$CM_DIR"/deploy/crds/*.yaml; do
  case $f in *.yaml) grep -q '^kind: CustomResourceDefinition' "$f" || continue;; esac
  kubectl apply --server-side --field-manager=e2e -f "$f" >/dev/null || fail "cannot apply $f"
done
kubectl wait crd --all --for=condition=Established --timeout=60s >/dev/null; ts "Gateway API and cert-manager CRDs"
# Envoy Gateway, the Gateway API implementation the tests name (issue #13).
bash "$ROOT/test/e2e/hack/envoy-gateway.sh"; ts "envoy-gateway"

# --- identities: Crossplane and provider-kubernetes run as service accounts ---
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
kubectl -n crossplane-system create sa provider-kubernetes --dry-run=client -o yaml | kubectl apply -f - >/dev/null
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
mkdir -p "$S/crds" && cp "$XP_DIR"/cluster/crds/*.yaml "$S/crds/"
for i in 1 2 3 4 5; do # the first run can race the Lock CRD into the RESTMapper
  if env KUBECONFIG="$S/crossplane.kubeconfig" CRDS_PATH="$S/crds" ENABLE_WEBHOOKS=false TLS_CA_SECRET_NAME=crossplane-root-ca \
    TLS_CLIENT_SECRET_NAME=crossplane-tls-client "$CROSSPLANE_CORE" core init >> "$L/crossplane-init.log" 2>&1; then break; fi
  [ "$i" = 5 ] && fail "crossplane core init failed (see crossplane-init.log)"
  sleep 2
done; ts "crossplane init"
mkdir -p "$S/xp-client-certs" "$S/fn-certs" "$S/provider-certs" "$S/xpkg-cache"
for k in ca.crt tls.crt tls.key; do kubectl -n crossplane-system get secret crossplane-tls-client -o jsonpath="{.data.${k//./\\.}}" | base64 -d > "$S/xp-client-certs/$k"; done
kubectl -n crossplane-system get secret crossplane-root-ca -o jsonpath='{.data.tls\.crt}' | base64 -d > "$S/fn-certs/ca.crt"
kubectl -n crossplane-system get secret crossplane-root-ca -o jsonpath='{.data.tls\.key}' | base64 -d > "$S/root-ca.key"
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$S/fn.ext"
openssl req -newkey rsa:2048 -nodes -keyout "$S/fn-certs/tls.key" -out "$S/fn.csr" -subj "/O=Crossplane/CN=function-tenant-gateway" 2>/dev/null
openssl x509 -req -in "$S/fn.csr" -CA "$S/fn-certs/ca.crt" -CAkey "$S/root-ca.key" -CAcreateserial -out "$S/fn-certs/tls.crt" -days 365 -extfile "$S/fn.ext" 2>/dev/null
for k in crt key; do cp "$P/provider.$k" "$S/provider-certs/tls.$k"; done
kubectl -n crossplane-system create secret generic function-tls-server --from-file=tls.crt="$S/fn-certs/tls.crt" --from-file=tls.key="$S/fn-certs/tls.key" \
  --from-file=ca.crt="$S/fn-certs/ca.crt" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n crossplane-system create secret generic provider-kubernetes-tls-server --from-file=tls.crt="$P/provider.crt" --from-file=tls.key="$P/provider.key" \
  --from-file=ca.crt="$P/ca.crt" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
KUBECONFIG="$S/crossplane.kubeconfig" POD_NAMESPACE=crossplane-system TLS_CLIENT_CERTS_DIR="$S/xp-client-certs" \
  bg crossplane "$CROSSPLANE_CORE" core start --debug --package-runtime=External --enable-webhooks=false --cache-dir="$S/xpkg-cache" \
  --metrics-port=18080 --health-probe-port=18081 --poll-interval=15s
waitfor 60 curl -sf http://127.0.0.1:18081/readyz || fail "crossplane did not become ready"; ts "crossplane"

# The RBAC manager writes the ClusterRoles that let Crossplane manage the XRs
# and claims of the XRDs the Configuration brings (Crossplane cannot
# establish an XRD without them). It runs only until it has: it and
# provider-kubernetes both bind metrics to :8080, with no flag to move either.
KUBECONFIG="$P/kubeconfig" POD_NAMESPACE=crossplane-system bg rbac-manager "$CROSSPLANE_CORE" rbac start

# --- the function: a local process that Crossplane reaches over mTLS ---
bg function "$FUNCTION_BIN" --address=127.0.0.1:9444 --tls-server-certs-dir="$S/fn-certs" --debug --metrics-address= --ttl="${FUNCTION_TTL:-10s}"

# --- optional, before our packages: E2E_BEFORE_INSTALL (the Makefile's is
# reference-seed.sh, which leaves the cluster as the Cozystack controller
# would for the migration test) ---
if [ -n "${E2E_BEFORE_INSTALL:-}" ]; then bash "$E2E_BEFORE_INSTALL" || fail "$E2E_BEFORE_INSTALL failed"; ts "before install: $(basename "$E2E_BEFORE_INSTALL")"; fi

# --- install: mirror the public repositories to the loopback registry ---
kubectl apply -f - >/dev/null <<IC
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata: {name: e2e-mirror-cozystack}
spec:
  matchImages: [{type: Prefix, prefix: ghcr.io/cozystack/}]
  rewriteImage: {prefix: 127.0.0.1:5000/cozystack/}
---
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata: {name: e2e-mirror-crossplane-contrib}
spec:
  matchImages: [{type: Prefix, prefix: xpkg.crossplane.io/crossplane-contrib/}]
  rewriteImage: {prefix: 127.0.0.1:5000/crossplane-contrib/}
IC
# The Function first, under the name the Compositions call (see the README).
"$CROSSPLANE" xpkg install function "ghcr.io/cozystack/function-tenant-gateway:$VERSION" function-tenant-gateway >> "$L/xpkg.log" 2>&1 \
  || fail "cannot install the Function (see xpkg.log)"
revision(){ kubectl get "$1" -l "pkg.crossplane.io/package=$2" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }
waitfor 90 sh -c "kubectl get functionrevisions -l pkg.crossplane.io/package=function-tenant-gateway -o name | grep -q ." \
  || fail "no FunctionRevision: $(kubectl get function function-tenant-gateway -o jsonpath='{.status.conditions}')"
REV=$(revision functionrevisions function-tenant-gateway)
kubectl patch functionrevision "$REV" --subresource=status --type=merge -p '{"status":{"endpoint":"127.0.0.1:9444","tlsServerSecretName":"function-tls-server"}}' >/dev/null
kubectl wait functionrevision "$REV" --for=condition=RevisionHealthy --timeout=60s >/dev/null || fail "FunctionRevision $REV is not healthy"
ts "function $REV at 127.0.0.1:9444"
"$CROSSPLANE" xpkg install configuration "ghcr.io/cozystack/configuration-tenant-gateway:$VERSION" configuration-tenant-gateway >> "$L/xpkg.log" 2>&1 \
  || fail "cannot install the Configuration (see xpkg.log)"
# Crossplane resolves the provider dependency from the registry and names it
# after the repository.
waitfor 120 sh -c "kubectl get providerrevisions -l pkg.crossplane.io/package=crossplane-contrib-provider-kubernetes -o name | grep -q ." \
  || fail "the provider-kubernetes dependency was not installed: $(kubectl get configuration configuration-tenant-gateway -o jsonpath='{.status.conditions}')"
PREV=$(revision providerrevisions crossplane-contrib-provider-kubernetes)
waitfor 60 kubectl get clusterrole crossplane:composite:tenantgateways.gateway.cozystack.io:aggregate-to-crossplane \
  crossplane:composite:xtenants.apps.cozystack.io:aggregate-to-crossplane || fail "the RBAC manager wrote no roles for our XRDs"
stop_rbac(){ local p; p=$(cat "$S/rbac-manager.pid"); kill "$p"; for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.5; done; kill -9 "$p"; }
stop_rbac; ts "RBAC manager wrote the XRD roles"
kubectl wait xrd --all --for=condition=Established --timeout=60s >/dev/null || fail "the XRDs were not established: $(kubectl get xrd)"
kubectl patch providerrevision "$PREV" --subresource=status --type=merge -p '{"status":{"tlsServerSecretName":"provider-kubernetes-tls-server"}}' >/dev/null
ts "provider revision $PREV"

# --- provider-kubernetes, out of cluster ---
# The example's ProviderConfigs use InjectedIdentity, which means
# rest.InClusterConfig() and fails outside a pod. Here they read a kubeconfig
# with a token of the same service account from disk (source Filesystem), so
# the manifests are applied as system:serviceaccount:crossplane-system:
# provider-kubernetes with exactly the example's RBAC. The controller itself
# runs as the admin: in a cluster Crossplane's RBAC manager grants it its own
# CRDs, and no RBAC manager runs here.
# The ProviderConfig CRDs come with the revision; the Object CRDs only once
# the file's activation policy activates them.
waitfor 120 kubectl wait crd providerconfigs.kubernetes.crossplane.io clusterproviderconfigs.kubernetes.m.crossplane.io \
  --for=condition=Established --timeout=5s || fail "provider-kubernetes CRDs not established: $(kubectl get providerrevision "$PREV" -o jsonpath='{.status.conditions}')"
kubectl apply -f "$ROOT/examples/cluster/provider-kubernetes.yaml" >/dev/null || fail "cannot apply examples/cluster/provider-kubernetes.yaml"
waitfor 60 kubectl wait crd objects.kubernetes.crossplane.io objects.kubernetes.m.crossplane.io --for=condition=Established --timeout=5s \
  || fail "the Object CRDs were not activated: $(kubectl get managedresourcedefinitions)"
kubeconfig_for provider-kubernetes > "$S/provider-kubernetes.kubeconfig"
kubectl apply -f - >/dev/null <<PC
apiVersion: kubernetes.m.crossplane.io/v1alpha1
kind: ClusterProviderConfig
metadata: {name: function-tenant-gateway}
spec:
  credentials: {source: Filesystem, fs: {path: "$S/provider-kubernetes.kubeconfig"}}
---
apiVersion: kubernetes.crossplane.io/v1alpha1
kind: ProviderConfig
metadata: {name: default}
spec:
  credentials: {source: Filesystem, fs: {path: "$S/provider-kubernetes.kubeconfig"}}
PC
# --sanitize-secrets and --enable-server-side-apply: the args of the
# example's DeploymentRuntimeConfig (the wildcard replica's), until the
# provider is started with the args of the Deployment derived from it.
TLS_SERVER_CERTS_DIR="$S/provider-certs" HEALTH_PROBE_BIND_ADDRESS=127.0.0.1:18082 \
  bg provider-kubernetes "$PROVIDER_KUBERNETES" --debug --poll=15s --sync=1m --sanitize-secrets --enable-server-side-apply
waitfor 60 curl -sf http://127.0.0.1:18082/readyz || fail "provider-kubernetes did not become ready"
# What a Deployment runtime reports once the pod is up: without it the
# packages stay HEALTHY=False ("Package runtime health is Unknown").
runtime_healthy(){
  kubectl patch "$1" "$2" --subresource=status --type=json -p "[{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":{\"type\":\"RuntimeHealthy\",\"status\":\"True\",\"reason\":\"HealthyPackageRevision\",\"lastTransitionTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}}]" >/dev/null
}
runtime_healthy functionrevision "$REV"
runtime_healthy providerrevision "$PREV"
for k in configurations providers functions; do
  kubectl wait "$k.pkg.crossplane.io" --all --for=condition=Healthy --timeout=120s >/dev/null || fail "$k not healthy: $(kubectl get "$k.pkg.crossplane.io" -o wide)"
done
ts "packages healthy"
echo "export KUBECONFIG=$KUBECONFIG"
