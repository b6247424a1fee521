# hack/lib.sh: the shell helpers the repository's scripts share (the e2e
# control plane's test/e2e/hack/*.sh and hack/migrate-from-cozystack.sh).
# Source it after setting PREFIX, the name every message starts with, and,
# for the control plane's scripts, L (the log folder, which fail points to)
# and S (the run folder, where bg records PIDs).

# log MESSAGE: a line of progress.
log(){ echo "$PREFIX: $*"; }

# fail MESSAGE: stop the script, saying why and where the logs are.
fail(){
  echo "$PREFIX: $*" >&2
  if [ -n "${L:-}" ]; then echo "logs: $L" >&2; fi
  exit 1
}

# waitfor SECONDS CMD...: run CMD, quietly, until it succeeds or SECONDS
# pass; then say what timed out and return 1, so the caller's `|| fail`
# says why it mattered.
waitfor(){
  local n=$1; shift
  for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "timeout after ${n}s: $*" >&2
  return 1
}

# retry N CMD...: CMD, its output shown, until it succeeds, N times at most
# (for a compare-and-swap that loses to any write in between).
retry(){
  local n=$1; shift
  for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 1; done
  return 1
}

# bg NAME CMD...: start CMD in a session of its own, its output in
# $L/NAME.log and its PID in $S/NAME.pid, and record in $S/NAME.sh a script
# that starts it again as it was started (environment, command line), which
# the fault tests (test/e2e/faults_test.go) run to restart it.
bg(){
  local name=$1; shift
  { echo '#!/bin/bash'; export -p; printf 'exec'; printf ' %q' "$@"; echo; } > "$S/$name.sh"
  setsid nohup "$@" > "$L/$name.log" 2>&1 & echo $! > "$S/$name.pid"
}

# ports_free PORT...: fail when another process listens on a loopback port
# the control plane needs, as a second control plane would.
ports_free(){
  local port
  for port in "$@"; do
    if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then fail "port $port is in use: is another control plane up? (make e2e-down)"; fi
  done
}
