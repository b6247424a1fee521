#!/bin/bash
# Moves TenantGateways from the Cozystack TenantGateway controller to
# function-tenant-gateway without re-creating a Gateway, Certificate or
# Issuer and without a moment in which a namespace loses its gateway label.
# docs/migration.md is the procedure; this script is its commands, each a
# step that can be run and checked on its own:
#
#   preflight [NS/NAME]  read the platform and report what the takeover
#                        would break (fn/cmd/preflight): changes nothing;
#                        exits 3 when it reports a blocker
#   prepare              pause every TenantGateway for Crossplane and keep the
#                        CRD when its Helm release stops rendering it
#                        (before the Configuration is installed)
#   check-crd            the CRD is now our XRD's and every TenantGateway kept
#                        its uid (after the Configuration is installed)
#   clear-route-status   remove the route status entries the controller wrote
#                        under its controllerName
#   takeover NS [NAME]   resume one TenantGateway and hand the fields the
#                        controller wrote to Crossplane and provider-kubernetes;
#                        refuses to start while the pre-flight of that
#                        TenantGateway reports a blocker, unless MIGRATE_FORCE=1
#
# It needs kubectl and jq, and acts with the caller's credentials; the
# pre-flight is a Go command, run with `go run` from this repository unless
# MIGRATE_PREFLIGHT names a built binary (go build ./fn/cmd/preflight).
set -euo pipefail

CRD=tenantgateways.gateway.cozystack.io
# What the controller writes under (docs/migration.md).
REF_CONTROLLER_NAME=gateway.cozystack.io/tenantgateway-controller
# Crossplane's field managers: one per XR for composed resources, one for
# the XR's own status.
XP_COMPOSED_PREFIX=apiextensions.crossplane.io/composed/
XP_COMPOSITE=apiextensions.crossplane.io/composite
LABEL_GATEWAY=namespace.cozystack.io/gateway
ANNOTATION_ATTACHED_BY=cozystack.io/gateway-attached-by
TIMEOUT=${MIGRATE_TIMEOUT:-180}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# log, fail, waitfor and retry (a hand-over is a compare-and-swap that
# loses to any write in between).
PREFIX=migrate; . "$ROOT/hack/lib.sh"
command -v jq >/dev/null || fail "jq is required"

# preflight [NS/NAME]: the read-only report of fn/cmd/preflight (its exit
# code: 0 no blocker, 3 blockers, 1 cannot read).
preflight(){
  local args=()
  [ -z "${1:-}" ] || args=(--tenantgateway "$1")
  if [ -n "${MIGRATE_PREFLIGHT:-}" ]; then
    "$MIGRATE_PREFLIGHT" "${args[@]}"
  else
    (cd "$ROOT" && go run ./fn/cmd/preflight "${args[@]}")
  fi
}

prepare(){
  # Crossplane must not compose a TenantGateway before its turn: paused XRs
  # are left alone entirely (no composition, no garbage collection).
  local n
  n=$(kubectl get "$CRD" -A --no-headers 2>/dev/null | wc -l)
  [ "$n" = 0 ] || kubectl annotate "$CRD" --all-namespaces --all crossplane.io/paused=true --overwrite >/dev/null
  log "paused $n TenantGateways"
  # Helm deletes a resource it stops rendering unless the live object says
  # keep. Crossplane replaces the CRD's metadata when it adopts it, so this
  # must be in place, and the chart upgraded without the CRD, before the
  # Configuration is installed (docs/migration.md, steps 4 and 5).
  kubectl annotate crd "$CRD" helm.sh/resource-policy=keep --overwrite >/dev/null
  log "CRD $CRD carries helm.sh/resource-policy=keep"
}

check_crd(){
  local owner
  owner=$(kubectl get crd "$CRD" -o jsonpath='{.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[?(@.controller==true)].name}')
  [ "$owner" = "CompositeResourceDefinition/$CRD" ] || fail "CRD $CRD is controlled by '$owner', not by the XRD: is the Configuration installed?"
  kubectl wait xrd "$CRD" --for=condition=Established --timeout=60s >/dev/null || fail "XRD $CRD is not established"
  log "CRD $CRD is the XRD's; $(kubectl get "$CRD" -A --no-headers | wc -l) TenantGateways"
}

clear_route_status(){
  local kind items n=0
  for kind in httproutes.gateway.networking.k8s.io tlsroutes.gateway.networking.k8s.io; do
    kubectl get crd "$kind" >/dev/null 2>&1 || continue
    items=$(kubectl get "$kind" -A -o json | jq -c --arg c "$REF_CONTROLLER_NAME" '
      .items[] | select(any(.status.parents[]?; .controllerName == $c))
      | {ns: .metadata.namespace, name: .metadata.name,
         patch: ([.status.parents | to_entries[] | select(.value.controllerName == $c) | .key] | sort | reverse
                 | map({op: "test", path: "/status/parents/\(.)/controllerName", value: $c}, {op: "remove", path: "/status/parents/\(.)"}))}')
    while IFS= read -r it; do
      [ -n "$it" ] || continue
      kubectl patch "$kind" -n "$(jq -r .ns <<<"$it")" "$(jq -r .name <<<"$it")" --subresource=status --type=json \
        -p "$(jq -c .patch <<<"$it")" >/dev/null
      n=$((n + 1))
    done <<<"$items"
  done
  log "removed the $REF_CONTROLLER_NAME status entries of $n routes"
}

# hand_over KIND NS NAME SUBRESOURCE TARGET SOURCE_FILTER: merge the fields of
# the Update entries that SOURCE_FILTER (a jq filter on a managedFields entry)
# selects into the one Apply entry of manager TARGET, and drop those Update
# entries. Server-side apply then removes what TARGET no longer applies, as
# for any field it owned: what the controller wrote and the function does not
# compose is removed on Crossplane's next apply instead of staying forever
# under a manager nobody runs. The resourceVersion makes it a compare-and-swap.
hand_over(){
  local kind=$1 ns=$2 name=$3 sub=$4 target=$5 filter=$6 patch
  patch=$(kubectl get "$kind" -n "$ns" "$name" -o json --show-managed-fields | jq -c --arg sub "$sub" --arg t "$target" "
    def src: .operation == \"Update\" and ((.subresource // \"\") == \$sub) and ($filter);
    def dst: .operation == \"Apply\" and ((.subresource // \"\") == \$sub) and .manager == \$t;
    .metadata.managedFields as \$mf
    | [\$mf[] | select(src)] as \$old
    | if (\$old | length) == 0 then empty
      elif ([\$mf[] | select(dst)] | length) != 1 then error(\"no apply entry of \" + \$t)
      else {metadata: {resourceVersion: .metadata.resourceVersion, managedFields: [\$mf[] | select(src | not)
             | if dst then .fieldsV1 = (reduce \$old[] as \$o (.fieldsV1; . * \$o.fieldsV1)) else . end]}}
      end") || return 1
  [ -n "$patch" ] || return 0
  kubectl patch "$kind" -n "$ns" "$name" --type=merge -p "$patch" >/dev/null || return 1
  log "$kind $ns/$name: the controller's fields${sub:+ ($sub)} now belong to $target"
}

# release_namespace NS OBJECT: the controller's claim on the namespace's
# gateway label and attached-by annotation goes; provider-kubernetes' Object
# (which applied both with the same values) stays their only owner, so the
# label is never absent and leaves when the function releases the namespace.
# The controller's claim is the Update entry that owns the annotation, which
# only it writes: it owns the label too unless someone had written the same
# value before it (an update owns only the fields it changed), as a tenant
# chart does on the owner's namespace; that writer keeps its label.
release_namespace(){
  local ns=$1 object=$2 patch
  patch=$(kubectl get ns "$ns" -o json --show-managed-fields | jq -c --arg l "f:$LABEL_GATEWAY" --arg a "f:$ANNOTATION_ATTACHED_BY" --arg t "provider-kubernetes/$object" '
    def owns: .fieldsV1["f:metadata"]["f:annotations"][$a] != null;
    .metadata.managedFields as $mf
    | if any($mf[]; .operation == "Update" and owns) | not then empty
      else {metadata: {resourceVersion: .metadata.resourceVersion, managedFields: [$mf[]
             | if .operation == "Update" and owns then del(.fieldsV1["f:metadata"]["f:labels"][$l], .fieldsV1["f:metadata"]["f:annotations"][$a]) else . end]}}
      end') || return 1
  [ -n "$patch" ] || return 0
  kubectl patch ns "$ns" --type=merge -p "$patch" >/dev/null || return 1
  log "namespace $ns: gateway label and annotation now belong to provider-kubernetes/$object only"
}

marks_applied(){ # NS OBJECT: provider-kubernetes' Object applied both marks
  kubectl get ns "$1" -o json --show-managed-fields | jq -e --arg l "f:$LABEL_GATEWAY" --arg a "f:$ANNOTATION_ATTACHED_BY" --arg t "provider-kubernetes/$2" '
    any(.metadata.managedFields[]; .manager == $t and .operation == "Apply"
      and .fieldsV1["f:metadata"]["f:labels"][$l] != null and .fieldsV1["f:metadata"]["f:annotations"][$a] != null)' >/dev/null
}

composed_by_crossplane(){ # KIND NS NAME
  kubectl get "$1" -n "$2" "$3" -o json --show-managed-fields | jq -e --arg p "$XP_COMPOSED_PREFIX" '
    (.metadata.annotations["crossplane.io/composition-resource-name"] // "") != ""
    and any(.metadata.managedFields[]; .operation == "Apply" and (.manager | startswith($p)))' >/dev/null
}

composed_refs(){ # NS NAME: "<kind>.<group> <name>" of each resource the TenantGateway composes
  kubectl get "$CRD" -n "$1" "$2" -o json | jq -r '.spec.crossplane.resourceRefs[]? | "\(.kind).\(.apiVersion | split("/") | if length == 2 then .[0] else "" end) \(.name)"'
}

hand_over_composed(){ # KIND NS NAME TENANTGATEWAY-UID: the controller's fields of what Crossplane now applies
  local kind=$1 ns=$2 rname=$3 uid=$4 mgr
  waitfor "$TIMEOUT" composed_by_crossplane "$kind" "$ns" "$rname" || fail "$kind $ns/$rname was not applied by Crossplane"
  if [ "${kind%%.*}" = Object ]; then
    local target tkind
    tkind=$(kubectl get "$kind" -n "$ns" "$rname" -o json | jq -r '.spec.forProvider.manifest.kind')
    # A route report (a ConfigMap in a tenant's namespace, see Route
    # reports in docs/design.md) is new with the function: the
    # controller left nothing of it to hand over.
    [ "$tkind" = Namespace ] || return 0
    target=$(kubectl get "$kind" -n "$ns" "$rname" -o json | jq -r '.spec.forProvider.manifest.metadata.name')
    waitfor "$TIMEOUT" marks_applied "$target" "$rname" || fail "namespace $target: provider-kubernetes has not applied the marks of Object $ns/$rname"
    retry 5 release_namespace "$target" "$rname" || fail "cannot release the marks of namespace $target"
    return 0
  fi
  # The controller's entry is the Update entry that wrote the controller
  # reference to this TenantGateway.
  local owns_ref=".fieldsV1[\"f:metadata\"][\"f:ownerReferences\"][\"k:{\\\"uid\\\":\\\"$uid\\\"}\"] != null"
  mgr=$(kubectl get "$kind" -n "$ns" "$rname" -o json --show-managed-fields | jq -r --arg p "$XP_COMPOSED_PREFIX" '[.metadata.managedFields[] | select(.operation == "Apply" and (.manager | startswith($p))) | .manager][0]')
  ref_mgr=${ref_mgr:-$(kubectl get "$kind" -n "$ns" "$rname" -o json --show-managed-fields | jq -r "[.metadata.managedFields[] | select(.operation == \"Update\" and ($owns_ref)) | .manager][0] // empty")}
  retry 5 hand_over "$kind" "$ns" "$rname" "" "$mgr" "$owns_ref" || fail "cannot hand over the fields of $kind $ns/$rname"
}

takeover(){
  local ns=$1 name=${2:-cozystack} uid kind rname waiting
  ref_mgr=""
  uid=$(kubectl get "$CRD" -n "$ns" "$name" -o jsonpath='{.metadata.uid}') || fail "no TenantGateway $ns/$name"
  if [ "${MIGRATE_FORCE:-}" = 1 ]; then
    log "MIGRATE_FORCE=1: taking over $ns/$name without the pre-flight"
  else
    local rc=0
    preflight "$ns/$name" || rc=$?
    case $rc in
      0) ;;
      3) fail "the pre-flight reports blockers for $ns/$name (above): resolve them, or take over anyway with MIGRATE_FORCE=1" ;;
      *) fail "the pre-flight could not read the platform (exit $rc)" ;;
    esac
  fi
  kubectl annotate "$CRD" -n "$ns" "$name" crossplane.io/paused- >/dev/null
  log "resumed TenantGateway $ns/$name ($uid)"
  waitfor "$TIMEOUT" sh -c "kubectl get $CRD -n $ns $name -o json | jq -e '(.status.conditions // []) | any(.type == \"Synced\" and .status == \"True\")'" \
    || fail "TenantGateway $ns/$name is not Synced: $(kubectl get "$CRD" -n "$ns" "$name" -o jsonpath='{.status.conditions}')"
  [ -n "$(composed_refs "$ns" "$name")" ] || fail "TenantGateway $ns/$name composed nothing"
  # The first runs may compose less than the function will: a certificate
  # waits while the order ledger's record is written (docs/design.md,
  # Certificate orders), and its hostname reads Waiting. What appears later
  # is handed over as it appears, until no hostname waits; one still
  # waiting at the timeout (the quota, say) is listed, and its Certificate
  # is handed over by running the takeover again once it is composed.
  local handed=" " deadline=$((SECONDS + TIMEOUT)) ref
  while :; do
    while read -r ref; do
      [[ $handed == *" $ref "* ]] && continue
      read -r kind rname <<<"$ref"
      hand_over_composed "${kind%.}" "$ns" "$rname" "$uid"
      handed+="$ref "
    done < <(composed_refs "$ns" "$name")
    waiting=$(kubectl get "$CRD" -n "$ns" "$name" -o json | jq -r '[.status.hostnames[]? | select(.state == "Waiting") | .hostname] | unique | join(" ")')
    [ -n "$waiting" ] || break
    if ((SECONDS > deadline)); then
      log "TenantGateway $ns/$name: still waiting for a certificate after ${TIMEOUT}s: $waiting; run the takeover again once it is composed"
      break
    fi
    sleep 2
  done
  # The TenantGateway's status: what the controller wrote goes to
  # Crossplane's status manager, so its own fields (observedGeneration, the
  # listeners it reported) leave on Crossplane's next status write.
  [ -z "$ref_mgr" ] || retry 5 hand_over "$CRD" "$ns" "$name" status "$XP_COMPOSITE" ".manager == \"$ref_mgr\"" \
    || fail "cannot hand over the status of TenantGateway $ns/$name"
  # What the controller composed and the function does not (for instance
  # the HTTPS listener's Certificate of a passthrough hostname, see
  # docs/migration.md) is still controlled by the TenantGateway but no
  # longer managed: listed for the operator, never deleted here.
  local left
  left=$(kubectl get gateways.gateway.networking.k8s.io,httproutes.gateway.networking.k8s.io,issuers.cert-manager.io,certificates.cert-manager.io -n "$ns" -o json \
    | jq -r --arg uid "$uid" --argjson refs "$(kubectl get "$CRD" -n "$ns" "$name" -o json | jq -c '[.spec.crossplane.resourceRefs[] | "\(.kind)/\(.name)"]')" '
      .items[] | select(any(.metadata.ownerReferences[]?; .uid == $uid and .controller == true))
      | "\(.kind)/\(.metadata.name)" | select(IN($refs[]) | not)')
  [ -z "$left" ] || log "left over, controlled by $ns/$name but not composed by the function (delete once unused): $(echo $left)"
  log "TenantGateway $ns/$name is the function's"
}

case ${1:-} in
  preflight) preflight "${2:-}" ;;
  prepare) prepare ;;
  check-crd) check_crd ;;
  clear-route-status) clear_route_status ;;
  takeover) [ -n "${2:-}" ] || fail "usage: $0 takeover NAMESPACE [NAME]"; takeover "$2" "${3:-cozystack}" ;;
  *) fail "usage: $0 preflight [NAMESPACE/NAME] | prepare | check-crd | clear-route-status | takeover NAMESPACE [NAME]" ;;
esac
