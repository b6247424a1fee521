#!/bin/bash
# make e2e: a fresh control plane (up.sh), the Go tests of test/e2e against
# it, and down.sh whatever happens. On failure the last lines of every
# process's log are printed, since the state directory is wiped.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
R=${E2E_DIR:?}
bash "$ROOT/test/e2e/hack/down.sh" --wipe >/dev/null
dump(){
  for f in "$R"/logs/*.log; do
    [ -f "$f" ] || continue
    echo "----- $(basename "$f") (last 40 lines)"; tail -n 40 "$f"
  done
}
finish(){ rc=$?; if [ $rc -ne 0 ]; then dump; fi; bash "$ROOT/test/e2e/hack/down.sh" --wipe; exit $rc; }
trap finish EXIT
trap 'exit 130' INT TERM
start=$SECONDS
bash "$ROOT/test/e2e/hack/up.sh" || exit 1
echo "control plane up in $((SECONDS - start))s"
KUBECONFIG=$R/pki/kubeconfig E2E_DIR=$R go -C "$ROOT" test -tags e2e -count=1 -timeout "${E2E_TIMEOUT:-30m}" -v -run "${E2E_RUN:-.}" ./test/e2e/... || exit 1
echo "e2e passed in $((SECONDS - start))s"
