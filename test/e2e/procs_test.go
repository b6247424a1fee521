//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The processes of the control plane, as up.sh started them: each has a PID
// file and a start script (E2E_DIR/run/<name>.pid and <name>.sh, written by
// up.sh's bg and envoy-gateway.sh). The fault tests stop and start them.

// runPath is a file of the harness' run folder.
func runPath(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("E2E_DIR")
	if dir == "" {
		t.Fatal("E2E_DIR is not set: run through make e2e")
	}
	return filepath.Join(dir, "run", name)
}

// procPID is the recorded PID of a process of the control plane.
func procPID(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(runPath(t, name+".pid"))
	if err != nil {
		t.Fatalf("cannot read the PID of %s: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the PID file of %s holds %q: %v", name, b, err)
	}
	return pid
}

// stopProc signals a process of the control plane and waits until it has
// exited: SIGKILL is a crash, SIGTERM a restart as a kubelet does it (then
// SIGKILL after 60 s, as a pod's grace period ends).
func stopProc(t *testing.T, name string, sig syscall.Signal) {
	t.Helper()
	stopProcWithin(t, name, sig, 60*time.Second)
}

// stopProcWithin is stopProc with a grace period of its own.
func stopProcWithin(t *testing.T, name string, sig syscall.Signal, grace time.Duration) {
	t.Helper()
	pid := procPID(t, name)
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("cannot signal %s (PID %d): %v", name, pid, err)
	}
	deadline := time.Now().Add(grace)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startProc starts a process of the control plane again with the script up.sh
// recorded, in a session of its own as up.sh does, its output appended to its
// log, and records its new PID for down.sh.
func startProc(t *testing.T, name string) {
	t.Helper()
	logPath := filepath.Join(os.Getenv("E2E_DIR"), "logs", name+".log")
	log, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("cannot open %s: %v", logPath, err)
	}
	defer log.Close()
	fmt.Fprintf(log, "\n----- started again by %s at %s\n", t.Name(), time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command("bash", runPath(t, name+".sh"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s again: %v", name, err)
	}
	// Reap it when it exits (a later stop), so that a signal 0 no longer
	// finds it.
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(runPath(t, name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatalf("cannot record the PID of %s: %v", name, err)
	}
}

// waitHTTP waits until url answers 200 (a health probe).
func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, url+" healthy", func() (bool, string) {
		c, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(c, http.MethodGet, url, nil)
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer rsp.Body.Close()
		return rsp.StatusCode == http.StatusOK, rsp.Status
	})
}

// waitTCP waits until something listens at addr.
func waitTCP(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, addr+" listening", func() (bool, string) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		_ = c.Close()
		return true, ""
	})
}

// waitAPIServer waits until the API server answers /readyz.
func waitAPIServer(t *testing.T, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "kube-apiserver ready", func() (bool, string) {
		ns := &corev1.Namespace{}
		err := k8s.Get(t.Context(), client.ObjectKey{Name: "default"}, ns)
		return err == nil, fmt.Sprint(err)
	})
}
