# Sourced by up.sh (its functions and variables) with E2E_COEXIST=1: our
# install on a cluster where another party already installed and runs
# provider-kubernetes, as docs/install.md ("A cluster that already runs
# provider-kubernetes") tells an operator to do it. TestCoexistingProvider
# (test/e2e/coexist_test.go) judges what it leaves.
#
#   1. The platform's provider-kubernetes: the upstream package pushed to
#      the registry under a source of the platform's, installed as the
#      Provider provider-kubernetes with its own runtime config, activation
#      policy, provider config default and an Object using it
#      (test/e2e/testdata/coexist-platform*.yaml), and run as the kubelet
#      would run its Deployment. What it has is written to
#      run/coexist/before.json.
#   2. Our install as on an empty cluster (steps 1 and 2): Crossplane
#      refuses our provider control of the platform's CRDs. The refused
#      ProviderRevision is kept in run/coexist/refused-revision.json and the
#      platform's objects in run/coexist/refused.json.
#   3. docs/install.md's way: delete the Configurations and our Provider,
#      install the TenantGateway Configuration without dependency
#      resolution (the Function the first attempt installed stays), bind
#      our roles to the platform's provider's service account, then our
#      provider configs (step 4). The admission policies' trust
#      (trusted-callers.yaml with that account's user name) is TestMain's.
#
# The RBAC manager and provider-kubernetes both bind :8080 here (one
# network namespace, no flag to move either), so they take turns: the
# platform's provider stops while the RBAC manager writes the roles of our
# XRDs, and starts again from the same command once it has (a pod restart
# to the objects: nothing of the Deployment or its pod changes).
C=$S/coexist
mkdir -p "$C"
PLATFORM_SA=platform-provider-kubernetes

# --- 1. the platform's provider-kubernetes ---
push "$S/pkg/provider-kubernetes-$PKUBE_VERSION.xpkg" "127.0.0.1:5000/crossplane-contrib/provider-kubernetes:$PKUBE_VERSION"
sed "s/@VERSION@/$PKUBE_VERSION/" "$ROOT/test/e2e/testdata/coexist-platform.yaml" | kubectl apply -f - >/dev/null \
  || fail "cannot apply test/e2e/testdata/coexist-platform.yaml"
waitfor 120 sh -c "kubectl get providerrevisions -l pkg.crossplane.io/package=provider-kubernetes -o name | grep -q ." \
  || fail "Crossplane made no revision of the platform's Provider provider-kubernetes: $(kubectl get provider.pkg.crossplane.io provider-kubernetes -o jsonpath='{.status.conditions}')"
PLATFORM_REV=$(revision providerrevisions provider-kubernetes)
waitfor 120 kubectl wait crd providerconfigs.kubernetes.crossplane.io objects.kubernetes.crossplane.io objects.kubernetes.m.crossplane.io \
  --for=condition=Established --timeout=5s \
  || fail "the platform's provider-kubernetes CRDs not established: $(kubectl get providerrevision "$PLATFORM_REV" -o jsonpath='{.status.conditions}')"
provider_deployment "$PLATFORM_REV"
[ "$SA" = "$PLATFORM_SA" ] || fail "the platform's provider runs as $SA, not as its runtime config's $PLATFORM_SA"
PLATFORM_DEPLOY=$DEPLOY
stop_rbac
start_provider
kubectl wait provider.pkg.crossplane.io provider-kubernetes --for=condition=Healthy --timeout=120s >/dev/null \
  || fail "the platform's Provider is not healthy: $(kubectl get provider.pkg.crossplane.io provider-kubernetes -o jsonpath='{.status.conditions}')"
kubectl apply -f "$ROOT/test/e2e/testdata/coexist-platform-configs.yaml" >/dev/null || fail "cannot apply test/e2e/testdata/coexist-platform-configs.yaml"
kubectl wait object.kubernetes.crossplane.io platform-settings --for=condition=Ready --timeout=120s >/dev/null \
  || fail "the platform's Object is not ready: $(kubectl get object.kubernetes.crossplane.io platform-settings -o jsonpath='{.status.conditions}')"
ts "the platform's provider-kubernetes: $PLATFORM_REV, Deployment $PLATFORM_DEPLOY as $SA"
# snapshot FILE: the platform's objects, as the test compares them: its
# packages and runtime, provider config, Object, Deployment and service
# account, the CRDs and ManagedResourceDefinitions its revision controls,
# and every binding of its service account.
snapshot(){
  {
    kubectl -n crossplane-system get provider.pkg.crossplane.io/provider-kubernetes "providerrevision.pkg.crossplane.io/$PLATFORM_REV" \
      deploymentruntimeconfig.pkg.crossplane.io/platform-provider-kubernetes imageconfig.pkg.crossplane.io/platform-provider-kubernetes \
      managedresourceactivationpolicy.apiextensions.crossplane.io/platform-provider-kubernetes \
      providerconfig.kubernetes.crossplane.io/default object.kubernetes.crossplane.io/platform-settings \
      "deployment.apps/$PLATFORM_DEPLOY" "serviceaccount/$PLATFORM_SA" -o json | jq '.items[]'
    kubectl get crd,managedresourcedefinitions.apiextensions.crossplane.io -o json \
      | jq '.items[] | select((.spec.group // "") | test("^kubernetes(\\.m)?\\.crossplane\\.io$"))'
    kubectl get clusterrolebindings,rolebindings -A -o json \
      | jq --arg sa "$PLATFORM_SA" '.items[] | select(any(.subjects[]?; .kind == "ServiceAccount" and .name == $sa and .namespace == "crossplane-system"))'
  } | jq -s '{apiVersion: "v1", kind: "List", items: .}' > "$1" || fail "cannot write $1"
}
snapshot "$C/before.json"

# The RBAC manager's turn.
stop_proc provider-kubernetes
start_rbac

# --- 2. our install, as on an empty cluster: refused ---
our_runtime
"$CROSSPLANE" xpkg install configuration "ghcr.io/cozystack/configuration-tenant-gateway-tenant:$VERSION" >> "$L/xpkg.log" 2>&1 \
  || fail "cannot install the Configuration (see xpkg.log)"
waitfor 120 sh -c "kubectl get providerrevisions -l pkg.crossplane.io/package=cozystack-tenant-gateway-provider-kubernetes -o name | grep -q ." \
  || fail "the provider-kubernetes dependency was not installed: $(kubectl get configuration.pkg.crossplane.io -o wide)"
OUR_PREV=$(revision providerrevisions cozystack-tenant-gateway-provider-kubernetes)
refused(){ kubectl get providerrevision "$OUR_PREV" -o json \
  | jq -e '.status.conditions[]? | select(.type == "RevisionHealthy" and .status == "False" and (.message // "" | test("already controlled by")))' >/dev/null; }
waitfor 180 refused || fail "our ProviderRevision $OUR_PREV was not refused control of the platform's CRDs: $(kubectl get providerrevision "$OUR_PREV" -o jsonpath='{.status.conditions}')"
kubectl get providerrevision "$OUR_PREV" -o json > "$C/refused-revision.json"
snapshot "$C/refused.json"
ts "our provider refused: $(jq -r '.status.conditions[] | select(.type == "RevisionHealthy") | .message' "$C/refused-revision.json" | cut -c1-200)"

# --- 3. docs/install.md's way beside the platform's provider ---
# One at a time, each gone with its revisions before the next: while a
# package's revision is in the Lock, Crossplane installs its missing
# dependencies again (deleted together, the TenantGateway Configuration
# and our Provider came back as the Tenant Configuration's).
gone(){ kubectl get "$1.pkg.crossplane.io" "$2" >/dev/null 2>&1 && return 1; [ -z "$(kubectl get "${1}revisions.pkg.crossplane.io" -l "pkg.crossplane.io/package=$2" -o name)" ]; }
for p in configuration/cozystack-configuration-tenant-gateway-tenant configuration/cozystack-configuration-tenant-gateway provider/cozystack-tenant-gateway-provider-kubernetes; do
  kubectl delete "${p%%/*}.pkg.crossplane.io" "${p#*/}" --timeout=120s >/dev/null || fail "cannot delete our ${p%%/*} ${p#*/}"
  waitfor 120 gone "${p%%/*}" "${p#*/}" || fail "our ${p%%/*} ${p#*/} is still there or was installed again: $(kubectl get "${p%%/*}s.pkg.crossplane.io" -o wide)"
done
waitfor 120 sh -c '[ -z "$(kubectl get xrd -o name)" ]' || fail "our XRDs were not deleted: $(kubectl get xrd)"
# The runtime files' DeploymentRuntimeConfig and ImageConfigs, which this
# way leaves out.
kubectl delete imageconfig.pkg.crossplane.io tenant-gateway-provider-kubernetes-runtime tenant-gateway-provider-kubernetes-runtime-mirror >/dev/null \
  || fail "cannot delete our provider's runtime ImageConfigs"
kubectl delete deploymentruntimeconfig.pkg.crossplane.io tenant-gateway-provider-kubernetes >/dev/null || fail "cannot delete our provider's runtime config"
kubectl get function.pkg.crossplane.io cozystack-function-tenant-gateway >/dev/null 2>&1 \
  || "$CROSSPLANE" xpkg install function "ghcr.io/cozystack/function-tenant-gateway:$VERSION" >> "$L/xpkg.log" 2>&1 \
  || fail "cannot install the Function (see xpkg.log)"
kubectl apply -f - >/dev/null <<YAML || fail "cannot apply the Configuration without dependency resolution"
apiVersion: pkg.crossplane.io/v1
kind: Configuration
metadata: {name: cozystack-configuration-tenant-gateway}
spec:
  package: ghcr.io/cozystack/configuration-tenant-gateway:$VERSION
  skipDependencyResolution: true
YAML
# provider-kubernetes-runtime.yaml without its DeploymentRuntimeConfig and
# ImageConfig, its ClusterRoleBindings binding the platform's account.
awk -v sa="$PLATFORM_SA" '
  function flush() { if (doc != "" && doc !~ /\nkind: (DeploymentRuntimeConfig|ImageConfig)\n/) printf "%s\n---\n", doc; doc = "" }
  /^---$/ { flush(); next }
  { if (subj && $0 == "  name: tenant-gateway-provider-kubernetes") $0 = "  name: " sa
    if ($0 ~ /^subjects:/) subj = 1; else if ($0 ~ /^[a-z]/) subj = 0
    doc = doc "\n" $0 }
  END { flush() }' "$ROOT/examples/cluster/provider-kubernetes-runtime.yaml" > "$C/provider-kubernetes-runtime.yaml"
[ "$(grep -c "^  name: $PLATFORM_SA\$" "$C/provider-kubernetes-runtime.yaml")" = 2 ] && ! grep -q 'kind: \(DeploymentRuntimeConfig\|ImageConfig\)' "$C/provider-kubernetes-runtime.yaml" \
  || fail "cannot rewrite provider-kubernetes-runtime.yaml for the platform's account: $C/provider-kubernetes-runtime.yaml"
kubectl apply -f "$C/provider-kubernetes-runtime.yaml" >/dev/null || fail "cannot apply $C/provider-kubernetes-runtime.yaml"
# The RBAC manager's roles for the XRD, owned by it: those of the first
# attempt's XRD are the garbage collector's to delete.
xrd_roles(){
  local uid; uid=$(kubectl get xrd tenantgateways.gateway.cozystack.io -o jsonpath='{.metadata.uid}' 2>/dev/null) && [ -n "$uid" ] || return 1
  kubectl get clusterrole crossplane:composite:tenantgateways.gateway.cozystack.io:aggregate-to-crossplane -o jsonpath='{.metadata.ownerReferences[*].uid}' 2>/dev/null | grep -qw "$uid"
}
waitfor 120 xrd_roles || fail "the RBAC manager wrote no roles for our XRD"
kubectl wait xrd --all --for=condition=Established --timeout=60s >/dev/null || fail "the XRDs were not established: $(kubectl get xrd)"
kubectl apply -f "$ROOT/examples/cluster/provider-kubernetes.yaml" >/dev/null || fail "cannot apply examples/cluster/provider-kubernetes.yaml"
waitfor 120 sh -c "kubectl get functionrevisions -l pkg.crossplane.io/package=cozystack-function-tenant-gateway -o name | grep -q ." \
  || fail "no revision of the Function cozystack-function-tenant-gateway"
REV=$(revision functionrevisions cozystack-function-tenant-gateway)

# The platform's provider's turn again, from the command it was started with.
stop_rbac
setsid nohup bash "$S/provider-kubernetes.sh" >> "$L/provider-kubernetes.log" 2>&1 & echo $! > "$S/provider-kubernetes.pid"
waitfor 60 curl -sf http://127.0.0.1:18082/readyz || fail "the platform's provider-kubernetes did not become ready again"
ts "our Configuration without dependency resolution beside $PLATFORM_REV; function revision $REV"
