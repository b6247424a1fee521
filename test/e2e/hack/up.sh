#!/bin/bash
# Groundwork for the end-to-end tests (issue #6): brings up, on loopback, etcd
# (Debian etcd-server), kube-apiserver and kube-controller-manager v1.35.8,
# Crossplane core v2.4.0 out of cluster with the External package runtime,
# and the function as a local process over mTLS, and installs the Function
# package from Crossplane's package cache (no registry). It follows
# shared/notes/real-cluster.md and was run by hand in session 1 (up in ~11 s).
# Run through `make e2e-up`, which sets the binaries; `make e2e-down` stops
# everything by PID. Not part of CI yet.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
R=${E2E_DIR:?}; : "${KUBE_APISERVER:?}" "${KUBE_CONTROLLER_MANAGER:?}" "${CROSSPLANE_CORE:?}" "${PKGCACHE:?}" "${FUNCTION_BIN:?}"
P=$R/pki; S=$R/run; L=$R/logs
export KUBECONFIG=$P/kubeconfig
mkdir -p $S $L
t0=$(date +%s); ts(){ echo "[+$(( $(date +%s)-t0 ))s] $*"; }
bg(){ local name=$1; shift; setsid nohup "$@" > $L/$name.log 2>&1 & echo $! > $S/$name.pid; }
waitfor(){ local n=$1; shift; for i in $(seq 1 ${n}); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done; echo "timeout: $*"; return 1; }
if [ ! -f $P/ca.crt ]; then
  mkdir -p $P && cd $P
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
fi
bg etcd etcd --name e2e --data-dir $S/etcd-data --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster e2e=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
waitfor 30 etcdctl --endpoints=http://127.0.0.1:2379 endpoint health; ts etcd
bg kube-apiserver $KUBE_APISERVER --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --secure-port=6443 --advertise-address=127.0.0.1 \
  --cert-dir=$S/apiserver-certs --tls-cert-file=$P/apiserver.crt --tls-private-key-file=$P/apiserver.key --client-ca-file=$P/ca.crt \
  --service-account-key-file=$P/sa.pub --service-account-signing-key-file=$P/sa.key --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range=10.0.0.0/24 --authorization-mode=RBAC --allow-privileged=true --endpoint-reconciler-type=none --profiling=false --v=1
waitfor 90 kubectl get --raw /readyz; ts apiserver
bg kube-controller-manager $KUBE_CONTROLLER_MANAGER --kubeconfig=$P/kubeconfig --authentication-kubeconfig=$P/kubeconfig --authorization-kubeconfig=$P/kubeconfig \
  --bind-address=127.0.0.1 --secure-port=10257 --cert-dir=$S/kcm-certs --service-account-private-key-file=$P/sa.key --root-ca-file=$P/ca.crt \
  --cluster-signing-cert-file=$P/ca.crt --cluster-signing-key-file=$P/ca.key --service-cluster-ip-range=10.0.0.0/24 --leader-elect=false --v=1
kubectl get ns crossplane-system >/dev/null 2>&1 || kubectl create ns crossplane-system >/dev/null
mkdir -p $S/crds && cp $(go env GOMODCACHE)/github.com/crossplane/crossplane/v2@v2.4.0/cluster/crds/*.yaml $S/crds/
for i in 1 2 3 4 5; do
  if env CRDS_PATH=$S/crds ENABLE_WEBHOOKS=false TLS_CA_SECRET_NAME=crossplane-root-ca TLS_CLIENT_SECRET_NAME=crossplane-tls-client $CROSSPLANE_CORE core init >> $L/crossplane-init.log 2>&1; then break; fi
  sleep 2
done; ts "crossplane init"
mkdir -p $S/xp-client-certs $S/fn-certs
for k in ca.crt tls.crt tls.key; do kubectl -n crossplane-system get secret crossplane-tls-client -o jsonpath="{.data.${k//./\\.}}" | base64 -d > $S/xp-client-certs/$k; done
kubectl -n crossplane-system get secret crossplane-root-ca -o jsonpath='{.data.tls\.crt}' | base64 -d > $S/fn-certs/ca.crt
kubectl -n crossplane-system get secret crossplane-root-ca -o jsonpath='{.data.tls\.key}' | base64 -d > $S/root-ca.key
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' > $S/fn.ext
openssl req -newkey rsa:2048 -nodes -keyout $S/fn-certs/tls.key -out $S/fn.csr -subj "/O=Crossplane/CN=function-tenant-gateway" 2>/dev/null
openssl x509 -req -in $S/fn.csr -CA $S/fn-certs/ca.crt -CAkey $S/root-ca.key -CAcreateserial -out $S/fn-certs/tls.crt -days 365 -extfile $S/fn.ext 2>/dev/null
kubectl -n crossplane-system create secret generic function-tls-server --from-file=tls.crt=$S/fn-certs/tls.crt --from-file=tls.key=$S/fn-certs/tls.key --from-file=ca.crt=$S/fn-certs/ca.crt --dry-run=client -o yaml | kubectl apply -f - >/dev/null
mkdir -p $S/xpkg-cache
REF=$($PKGCACHE $S/xpkg-cache xpkg.crossplane.io/cozystack/function-tenant-gateway $ROOT/package/function/crossplane.yaml)
KUBECONFIG=$P/kubeconfig POD_NAMESPACE=crossplane-system TLS_CLIENT_CERTS_DIR=$S/xp-client-certs \
  bg crossplane $CROSSPLANE_CORE core start --debug --package-runtime=External --enable-webhooks=false --cache-dir=$S/xpkg-cache --metrics-port=18080 --health-probe-port=18081
waitfor 60 curl -sf http://127.0.0.1:18081/readyz; ts "crossplane ready"
bg function $FUNCTION_BIN --address=127.0.0.1:9443 --tls-server-certs-dir=$S/fn-certs --debug --metrics-address= --ttl=10s
cat <<FN | kubectl apply -f - >/dev/null
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata: {name: function-tenant-gateway}
spec: {package: "$REF", packagePullPolicy: Never}
FN
waitfor 60 sh -c "kubectl get functionrevisions -l pkg.crossplane.io/package=function-tenant-gateway -o name | grep -q ."
REV=$(kubectl get functionrevisions -l pkg.crossplane.io/package=function-tenant-gateway -o jsonpath='{.items[0].metadata.name}')
kubectl patch functionrevision $REV --subresource=status --type=merge -p '{"status":{"endpoint":"127.0.0.1:9443","tlsServerSecretName":"function-tls-server"}}' >/dev/null
kubectl wait functionrevision $REV --for=condition=RevisionHealthy --timeout=60s >/dev/null; ts "function revision healthy"
