#!/bin/bash
# Stops what up.sh started, by recorded PID, and waits for each to exit (the
# API server takes seconds to release its port). --wipe removes the state.
# function-<i> and function-<i>-pod are the function's further pods when
# up.sh ran with FN_REPLICAS above 1 (TestFunctionReplicas).
R=${E2E_DIR:?}
for n in cert-manager cert-manager-web pebble named envoy-gateway provider-kubernetes rbac-manager function-3 function-3-pod function-2 function-2-pod function-1 function-1-pod function function-pod crossplane registry kube-controller-manager kube-apiserver etcd; do
  f=$R/run/$n.pid; [ -f "$f" ] || continue
  p=$(cat "$f"); kill "$p" 2>/dev/null || continue
  for _ in $(seq 1 60); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$p" 2>/dev/null; then kill -9 "$p"; echo "killed -9 $n"; else echo "stopped $n"; fi
done
[ "${1:-}" = "--wipe" ] && rm -rf "$R/run" "$R/logs" && echo "wiped $R/run $R/logs"
exit 0
