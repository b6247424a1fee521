//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// The http01 tests' world (tls.sh): cert-manager's second process watches
// only webNamespace; every name of webZone resolves, in BIND, to
// gatewayAddress, where playGateway serves port 80.
const (
	webNamespace   = "tenant-web"
	webZone        = "web.example"
	gatewayAddress = "127.0.80.80"
)

// playSolvers plays, for cert-manager's HTTP-01 solver Pods in
// webNamespace, the part of a kubelet that runs them, for as long as the
// tests run. No kubelet or container runtime runs here, so each solver Pod
// cert-manager creates becomes a process: cert-manager's own solver code
// (the acmesolver subcommand of test/e2e/tools/cert-manager, built from the
// same module) with the Pod's container arguments, in a network namespace
// of its own joined to the tests' by a veth pair, as a CNI plugin would
// join it. Once the solver answers on its port the Pod is reported running
// and ready with that namespace's address as its IP, as a kubelet reports
// it; the process is stopped when the Pod goes. Nothing else is played: the
// Pod, its Service and challenge HTTPRoute are cert-manager's.
func playSolvers(c context.Context, cl client.Client, log io.Writer) {
	bin := os.Getenv("CERT_MANAGER")
	if bin == "" {
		_, _ = fmt.Fprintln(log, "e2e solvers: CERT_MANAGER is not set; no HTTP-01 solver Pod will run")
		return
	}
	running := map[types.UID]*solverProc{}
	next := 0
	for {
		pods := &corev1.PodList{}
		err := cl.List(c, pods, client.InNamespace(webNamespace), client.MatchingLabels{gateway.LabelHTTP01Solver: "true"})
		if err != nil {
			_, _ = fmt.Fprintln(log, "e2e solvers: cannot list solver pods:", err)
		}
		seen := map[types.UID]bool{}
		for i := range pods.Items {
			p := &pods.Items[i]
			seen[p.UID] = true
			if running[p.UID] != nil || p.DeletionTimestamp != nil {
				continue
			}
			next++
			sp, err := startSolver(c, cl, bin, p, next)
			if err != nil {
				_, _ = fmt.Fprintf(log, "e2e solvers: cannot run pod %s: %v\n", p.Name, err)
				continue
			}
			running[p.UID] = sp
		}
		for uid, sp := range running {
			if !seen[uid] && err == nil {
				sp.stop()
				delete(running, uid)
			}
		}
		select {
		case <-c.Done():
			for _, sp := range running {
				sp.stop()
			}
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// solverProc is one solver Pod's process.
type solverProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (s *solverProc) stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// podAddresses are the two ends of the n-th solver's veth pair: a /30 of
// 10.245.0.0/16 (the function pod has 10.244.0.0/30), the tests' end first.
func podAddresses(n int) (host, pod string) {
	base := n * 4
	return fmt.Sprintf("10.245.%d.%d", base/256%256, base%256+1), fmt.Sprintf("10.245.%d.%d", base/256%256, base%256+2)
}

// startSolver runs the solver of Pod p as the n-th and reports the Pod
// running once the solver answers.
func startSolver(c context.Context, cl client.Client, bin string, p *corev1.Pod, n int) (*solverProc, error) {
	if len(p.Spec.Containers) != 1 || len(p.Spec.Containers[0].Ports) == 0 {
		return nil, fmt.Errorf("want one container with a port, got %d containers", len(p.Spec.Containers))
	}
	ctr := p.Spec.Containers[0]
	logFile, err := os.Create(filepath.Join(os.Getenv("E2E_DIR"), "logs", "solver-"+p.Name+".log"))
	if err != nil {
		return nil, fmt.Errorf("cannot create its log: %w", err)
	}
	cmd := exec.Command(bin, append([]string{"acmesolver"}, ctr.Args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A network namespace of its own, as a Pod has; killed with the tests.
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("cannot start the solver: %w", err)
	}
	sp := &solverProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = logFile.Close(); close(sp.done) }()
	pid := strconv.Itoa(cmd.Process.Pid)
	host, pod := podAddresses(n)
	link := "acme" + strconv.Itoa(n)
	steps := [][]string{
		{"ip", "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", pid},
		{"ip", "addr", "add", host + "/30", "dev", link},
		{"ip", "link", "set", link, "up"},
		{"nsenter", "-t", pid, "-n", "ip", "link", "set", "lo", "up"},
		{"nsenter", "-t", pid, "-n", "ip", "addr", "add", pod + "/30", "dev", "eth0"},
		{"nsenter", "-t", pid, "-n", "ip", "link", "set", "eth0", "up"},
		{"nsenter", "-t", pid, "-n", "ip", "route", "add", "default", "via", host},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(c, s[0], s[1:]...).CombinedOutput(); err != nil {
			sp.stop()
			return nil, fmt.Errorf("cannot set up its network (%v): %w: %s", s, err, out)
		}
	}
	// What the kubelet waits for before it reports a container ready: here
	// the solver's port answering (its image has no readiness probe).
	addr := net.JoinHostPort(pod, strconv.Itoa(int(ctr.Ports[0].ContainerPort)))
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			break
		}
		if time.Now().After(deadline) {
			sp.stop()
			return nil, fmt.Errorf("the solver does not answer on %s: %w", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := p.DeepCopy()
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	p.Status.HostIP = host
	p.Status.PodIP = pod
	p.Status.PodIPs = []corev1.PodIP{{IP: pod}}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: ctr.Name, Image: ctr.Image, Ready: true, Started: new(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}}
	if err := cl.Status().Patch(c, p, client.MergeFrom(before)); err != nil {
		sp.stop()
		return nil, fmt.Errorf("cannot report it running: %w", err)
	}
	return sp, nil
}

// playGateway serves port 80 of gatewayAddress for as long as the tests
// run, standing in for the data plane of the Gateways of webNamespace: no
// Envoy (or other Gateway data plane) binary can be had on this machine.
// It forwards only what Pebble and cert-manager's self-check ask for, an
// HTTP-01 challenge: a request for /.well-known/acme-challenge/<token> on
// host h goes to the Pod behind the challenge HTTPRoute of h whose rule
// matches that path exactly, and only if Envoy Gateway's controller has
// accepted that route on the Gateway's http listener; through the route's
// Service (its selector and target port) to the Pod's IP. Anything else is a
// 404. Which route Envoy itself would pick, the challenge's or the
// redirect's, is judged by Envoy Gateway's translator (TestHTTP01Issuance).
func playGateway(c context.Context, cl client.Client, log io.Writer) {
	l, err := net.Listen("tcp", net.JoinHostPort(gatewayAddress, "80"))
	if err != nil {
		_, _ = fmt.Fprintln(log, "e2e gateway: cannot listen; no HTTP-01 challenge can be validated:", err)
		return
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		backend, err := challengeBackend(r.Context(), cl, r.Host, r.URL.Path)
		if err != nil {
			_, _ = fmt.Fprintf(log, "e2e gateway: %s%s: %v\n", r.Host, r.URL.Path, err)
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: backend}).ServeHTTP(w, r)
	})}
	go func() { <-c.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_, _ = fmt.Fprintln(log, "e2e gateway:", err)
	}
}

// challengeBackend is the "<pod IP>:<port>" a challenge request goes to.
func challengeBackend(c context.Context, cl client.Client, host, path string) (string, error) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	routes := &unstructured.UnstructuredList{}
	routes.SetGroupVersionKind(gvkHTTPRoute.GroupVersion().WithKind("HTTPRouteList"))
	if err := cl.List(c, routes, client.InNamespace(webNamespace), client.MatchingLabels{gateway.LabelHTTP01Solver: "true"}); err != nil {
		return "", fmt.Errorf("cannot list challenge routes: %w", err)
	}
	for i := range routes.Items {
		rt := &routes.Items[i]
		var hosts []string
		for _, h := range slice(rt, "spec", "hostnames") {
			hosts = append(hosts, fmt.Sprint(h))
		}
		if !slices.Contains(hosts, host) {
			continue
		}
		if a := acceptedOnHTTP(rt); a != "True/Accepted" {
			return "", fmt.Errorf("challenge route %s: Envoy Gateway has not accepted it on listener http (Accepted %q)", rt.GetName(), a)
		}
		for _, rule := range slice(rt, "spec", "rules") {
			m, _ := rule.(map[string]any)
			if !exactPath(m, path) {
				continue
			}
			refs, _ := m["backendRefs"].([]any)
			if len(refs) != 1 {
				return "", fmt.Errorf("challenge route %s: want one backendRef, got %d", rt.GetName(), len(refs))
			}
			ref, _ := refs[0].(map[string]any)
			return serviceBackend(c, cl, fmt.Sprint(ref["name"]), ref["port"])
		}
	}
	return "", fmt.Errorf("no challenge route for host %s and path %s", host, path)
}

// acceptedOnHTTP is "status/reason" of the Accepted condition Envoy
// Gateway wrote on the route for a parent's http listener.
func acceptedOnHTTP(rt *unstructured.Unstructured) string {
	for _, p := range slice(rt, "status", "parents") {
		m, _ := p.(map[string]any)
		ref, _ := m["parentRef"].(map[string]any)
		if m["controllerName"] == envoyController && ref["sectionName"] == gateway.ListenerHTTP {
			return condOf(m["conditions"], "Accepted")
		}
	}
	return ""
}

// exactPath reports whether a route rule matches path exactly.
func exactPath(rule map[string]any, path string) bool {
	matches, _ := rule["matches"].([]any)
	for _, mt := range matches {
		m, _ := mt.(map[string]any)
		p, _ := m["path"].(map[string]any)
		if p["type"] == "Exact" && p["value"] == path {
			return true
		}
	}
	return false
}

// serviceBackend resolves a Service port to a ready Pod's IP and target
// port, as the data plane reaches a Service's endpoints.
func serviceBackend(c context.Context, cl client.Client, name string, port any) (string, error) {
	svc := &corev1.Service{}
	if err := cl.Get(c, client.ObjectKey{Namespace: webNamespace, Name: name}, svc); err != nil {
		return "", fmt.Errorf("cannot get Service %s: %w", name, err)
	}
	target := -1
	for _, p := range svc.Spec.Ports {
		if fmt.Sprint(p.Port) == fmt.Sprint(port) {
			target = p.TargetPort.IntValue()
		}
	}
	if target <= 0 {
		return "", fmt.Errorf("Service %s has no port %v with a numeric target port", name, port)
	}
	pods := &corev1.PodList{}
	if err := cl.List(c, pods, client.InNamespace(webNamespace), client.MatchingLabels(svc.Spec.Selector)); err != nil {
		return "", fmt.Errorf("cannot list the pods of Service %s: %w", name, err)
	}
	for _, p := range pods.Items {
		if p.Status.PodIP != "" && podReady(&p) {
			return net.JoinHostPort(p.Status.PodIP, strconv.Itoa(target)), nil
		}
	}
	return "", fmt.Errorf("Service %s has no ready pod", name)
}
