//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// Several replicas of the function (issue #26, item 3). Crossplane v2.4's
// Deployment runtime puts a function's pods behind a headless Service and
// sets the FunctionRevision's endpoint to dns:///<service>.<namespace>:9443;
// Crossplane dials it with gRPC's round_robin balancer, so every address the
// name resolves to is called. The harness plays the External runtime with
// one process (up.sh); TestFunctionReplicas plays a Deployment of two: two
// function processes on 127.0.0.1 and 127.0.0.2, one DNS name with both
// addresses in BIND's test zone (tls.sh), and the FunctionRevision's
// endpoint set to that name resolved through BIND (gRPC's dns resolver
// takes the server as the target's authority), as a cluster's DNS resolves
// a headless Service to its pods.
const (
	replicaHost = "function-replicas." + tlsZone
	replicaPort = 9445
	// replicaEndpoint is what a Deployment runtime writes
	// (dns:///<name>:<port>) with BIND named as the resolver.
	replicaEndpoint = "dns://" + dnsServer + "/function-replicas." + tlsZone + ":9445"
)

var gvkFunctionRevision = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}

// fnReplica is one function process the test started.
type fnReplica struct {
	name, ip, bin string
	cmd           *exec.Cmd
	args          []string
	log           string
}

func (r *fnReplica) addr() string    { return net.JoinHostPort(r.ip, strconv.Itoa(replicaPort)) }
func (r *fnReplica) metrics() string { return "http://" + r.ip + ":18084/metrics" }

// TestFunctionReplicas: two function processes behind the one name
// Crossplane dials, as a Deployment runtime with replicas: 2 gives it.
//   - Crossplane spreads the calls: each process serves a share of every
//     call in a window of route changes (its own
//     function_tenant_gateway_calls_total) and calls of the TenantGateway
//     under test (its own debug log), and the harness' own process none.
//   - The output is the same whichever process answers: with runs of the
//     TenantGateway on both, in steady state, nothing it composes and not
//     its status is written (their resourceVersions stay); and the request
//     Crossplane would send for it, built from the live cluster through
//     Crossplane's requirement loop (test/fake), gets byte-identical
//     responses (protobuf's deterministic encoding) from both, also with
//     every list of required resources reversed.
//   - No leader: neither process has API credentials (nothing to hold a
//     Lease with); with one killed the other serves the next route change
//     on its own, at once; the one started again is called again.
//
// Not parallel: while it runs every XR's calls go to its processes.
func TestFunctionReplicas(t *testing.T) {
	// Written without a control plane to run it on (docs/scale.md): kept
	// out of make e2e until it has passed there once.
	if os.Getenv("E2E_REPLICAS") != "1" {
		t.Skip("E2E_REPLICAS is not 1: TestFunctionReplicas has not yet run on a control plane (docs/scale.md, Several function replicas)")
	}
	bin := os.Getenv("FUNCTION_BIN")
	if bin == "" {
		t.Fatal("FUNCTION_BIN is not set: run through make e2e")
	}
	const ns = "tenant-replicas"
	const apex = "replicas.example"
	ttl := functionTTL(t)
	certs := replicaCerts(t)
	reps := []*fnReplica{
		startReplica(t, bin, "function-replica-1", "127.0.0.1", certs, ttl),
		startReplica(t, bin, "function-replica-2", "127.0.0.2", certs, ttl),
	}
	replicaRecords(t, reps)

	rev := activeFunctionRevision(t)
	original := str(rev, "status", "endpoint")
	setEndpoint(t, rev.GetName(), replicaEndpoint)
	t.Cleanup(func() { setEndpoint(t, rev.GetName(), original) })
	t.Logf("FunctionRevision %s: endpoint %s (was %s)", rev.GetName(), replicaEndpoint, original)

	// Crossplane picks the endpoint up at its next call of the function,
	// of any XR: from then on no call goes to the harness' process.
	before := []float64{replicaCalls(t, reps[0].metrics()), replicaCalls(t, reps[1].metrics())}
	tenantNamespaces(t, ns, apex, nil)
	apply(t, envoyTenantGateway(ns, apex))
	eventually(t, oneTTL+settle, "a call on one of the replicas", func() (bool, string) {
		a, b := replicaCalls(t, reps[0].metrics()), replicaCalls(t, reps[1].metrics())
		return a+b > before[0]+before[1], fmt.Sprintf("calls %v, %v", a, b)
	})
	harnessBefore := replicaCalls(t, functionMetrics)
	logs := []*logCursor{newLogCursor(t, reps[0].name+".log"), newLogCursor(t, reps[1].name+".log")}
	for _, l := range logs {
		l.mark()
	}
	before = []float64{replicaCalls(t, reps[0].metrics()), replicaCalls(t, reps[1].metrics())}

	// A window of route changes, each waited out.
	host := func(i int) string { return fmt.Sprintf("r%d.%s", i, apex) }
	const routes = 4
	for i := range routes {
		apply(t, httpRoute(ns, fmt.Sprintf("r%d", i), ns, "cozystack", host(i)))
		waitGateway(t, ns, "cozystack", "a listener for "+host(i), func(_ []string, gw *unstructured.Unstructured) bool {
			return listenerFor(gw, host(i)) != ""
		})
	}
	after := []float64{replicaCalls(t, reps[0].metrics()), replicaCalls(t, reps[1].metrics())}
	all := after[0] - before[0] + after[1] - before[1]
	own := []int{len(callTimes(readFrom(t, logs[0].path, logs[0].start), ns)), len(callTimes(readFrom(t, logs[1].path, logs[1].start), ns))}
	t.Logf("%d route changes: calls of every XR %v on %s, %v on %s; of %s/cozystack %d and %d", routes, after[0]-before[0], reps[0].name, after[1]-before[1], reps[1].name, ns, own[0], own[1])
	for i, r := range reps {
		// round_robin alternates over the ready addresses; a third leaves
		// room for calls that overlap.
		if share := (after[i] - before[i]) / all; all == 0 || share < 0.3 {
			t.Errorf("%s served %v of %v calls: round_robin spreads them over both replicas", r.name, after[i]-before[i], all)
		}
		if own[i] == 0 {
			t.Errorf("%s served no call of %s/cozystack", r.name, ns)
		}
	}
	if got := replicaCalls(t, functionMetrics); got != harnessBefore {
		t.Errorf("the harness' own function process served %v calls after the endpoint moved to the replicas", got-harnessBefore)
	}

	// Steady state, runs of the TenantGateway on both replicas: nothing
	// written. Envoy Gateway's status of the latest generation first.
	eventually(t, settle, "Gateway "+ns+"/cozystack status of its latest generation", func() (bool, string) {
		gw, _ := get(t, gvkGateway, ns, "cozystack")
		for _, c := range slice(gw, "status", "conditions") {
			if m, _ := c.(map[string]any); m["type"] == "Programmed" {
				g, _ := m["observedGeneration"].(int64)
				return g == gw.GetGeneration(), fmt.Sprintf("observedGeneration %d of %d", g, gw.GetGeneration())
			}
		}
		return false, "no Programmed condition"
	})
	for _, l := range logs {
		l.mark()
	}
	versions := composedVersions(t, ns)
	// Which replica a TTL run lands on depends on every other XR's calls:
	// wait for two on each (round_robin: each run is a coin toss at worst).
	eventually(t, 20*ttl+settle, "two runs of "+ns+"/cozystack on each replica", func() (bool, string) {
		a, b := len(callTimes(readFrom(t, logs[0].path, logs[0].start), ns)), len(callTimes(readFrom(t, logs[1].path, logs[1].start), ns))
		return a >= 2 && b >= 2, fmt.Sprintf("%d and %d runs", a, b)
	})
	if diff := diffVersions(versions, composedVersions(t, ns)); diff != "" {
		t.Errorf("runs of %s/cozystack on both replicas, nothing changed, wrote: %s", ns, diff)
	}

	// The same request to both, byte for byte.
	conns := []fake.Runner{replicaClient(t, reps[0]), replicaClient(t, reps[1])}
	req := liveRequest(t, conns[0], ns)
	reversed := proto.Clone(req).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
	for _, r := range reversed.GetRequiredResources() {
		slices.Reverse(r.Items)
	}
	var first []byte
	var firstRsp *fnv1.RunFunctionResponse
	for i, c := range []struct {
		runner fake.Runner
		req    *fnv1.RunFunctionRequest
		what   string
	}{
		{conns[0], req, reps[0].name}, {conns[1], req, reps[1].name},
		{conns[0], reversed, reps[0].name + ", lists reversed"}, {conns[1], reversed, reps[1].name + ", lists reversed"},
		{conns[1], req, reps[1].name + " again"},
	} {
		rsp, err := c.runner.RunFunction(t.Context(), c.req)
		if err != nil {
			t.Fatalf("cannot call %s: %v", c.what, err)
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, firstRsp = b, rsp
			checkDesiredGateway(t, rsp, ns)
			continue
		}
		if !bytes.Equal(b, first) {
			t.Errorf("%s answered the same request otherwise than %s (-%s +%s):\n%s", c.what, reps[0].name, reps[0].name, c.what, cmp.Diff(firstRsp, rsp, protocmp.Transform()))
		}
	}
	t.Logf("the request of %s/cozystack (%d required resources), 5 calls on 2 replicas: %d bytes each, identical", ns, len(req.GetRequiredResources()), len(first))

	// No leader: one replica killed, the other serves the next change
	// alone; started again, it is called again.
	stopReplica(t, reps[0], syscall.SIGKILL)
	survivor := replicaCalls(t, reps[1].metrics())
	changed := time.Now()
	apply(t, httpRoute(ns, "r-alone", ns, "cozystack", "alone."+apex))
	waitGateway(t, ns, "cozystack", "a listener for alone."+apex+" with "+reps[0].name+" killed", func(_ []string, gw *unstructured.Unstructured) bool {
		return listenerFor(gw, "alone."+apex) != ""
	})
	t.Logf("%s killed: a new route's listener in %s, %v calls on %s", reps[0].name, time.Since(changed).Round(100*time.Millisecond), replicaCalls(t, reps[1].metrics())-survivor, reps[1].name)
	restartReplica(t, reps[0])
	back := replicaCalls(t, reps[0].metrics())
	// gRPC reconnects with backoff (at most 2 minutes between attempts).
	eventually(t, 2*time.Minute+oneTTL+settle, reps[0].name+" called again after its restart", func() (bool, string) {
		n := replicaCalls(t, reps[0].metrics())
		return n > back, fmt.Sprintf("%v calls since its restart", n-back)
	})
}

// replicaCerts issues the replicas' serving certificate for replicaHost,
// signed by Crossplane's root CA (the harness issues its process' the same
// way, up.sh), and returns the folder holding it with the CA that verifies
// Crossplane's client certificate.
func replicaCerts(t *testing.T) string {
	t.Helper()
	caPEM, err := os.ReadFile(runPath(t, "fn-certs/ca.crt"))
	if err != nil {
		t.Fatalf("cannot read Crossplane's root CA: %v", err)
	}
	keyPEM, err := os.ReadFile(runPath(t, "root-ca.key"))
	if err != nil {
		t.Fatalf("cannot read Crossplane's root CA key: %v", err)
	}
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		t.Fatal("Crossplane's root CA or its key is not PEM")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatalf("cannot parse Crossplane's root CA: %v", err)
	}
	var caKey any
	if caKey, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
		if caKey, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
			t.Fatalf("cannot parse Crossplane's root CA key: %v", err)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{Organization: []string{"Crossplane"}, CommonName: "function-tenant-gateway"},
		DNSNames:     []string{replicaHost},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("cannot sign the replicas' certificate: %v", err)
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"ca.crt":  caPEM,
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startReplica starts one function process as up.sh starts the harness'
// (with --debug, whose log names the XR of every call), on its own address,
// its log beside the harness' and its PID where down.sh finds it. It has no
// kubeconfig and no service account: a replica cannot reach the API server.
func startReplica(t *testing.T, bin, name, ip, certs string, ttl time.Duration) *fnReplica {
	t.Helper()
	r := &fnReplica{name: name, ip: ip, bin: bin, log: filepath.Join(os.Getenv("E2E_DIR"), "logs", name+".log")}
	r.args = []string{"--debug", "--address=" + r.addr(), "--tls-server-certs-dir=" + certs, "--metrics-address=" + ip + ":18084", "--ttl=" + ttl.String()}
	restartReplica(t, r)
	t.Cleanup(func() { stopReplica(t, r, syscall.SIGTERM) })
	return r
}

// restartReplica starts (or starts again) the process of r.
func restartReplica(t *testing.T, r *fnReplica) {
	t.Helper()
	log, err := os.OpenFile(r.log, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("cannot open %s: %v", r.log, err)
	}
	defer log.Close()
	r.cmd = exec.Command(r.bin, r.args...)
	r.cmd.Env = []string{"PATH=/usr/bin:/bin"}
	r.cmd.Stdout, r.cmd.Stderr = log, log
	// Gone with the test binary if it dies before its cleanups.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", r.name, err)
	}
	// Reaped when it exits, so that a signal 0 no longer finds it.
	go func(c *exec.Cmd) { _ = c.Wait() }(r.cmd)
	if err := os.WriteFile(runPath(t, r.name+".pid"), []byte(strconv.Itoa(r.cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatalf("cannot record the PID of %s: %v", r.name, err)
	}
	waitTCP(t, r.addr(), 30*time.Second)
	waitHTTP(t, r.metrics(), 30*time.Second)
}

// stopReplica signals the process of r and waits until it has exited.
func stopReplica(t *testing.T, r *fnReplica, sig syscall.Signal) {
	t.Helper()
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(sig)
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(r.cmd.Process.Pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	_ = r.cmd.Process.Kill()
	_ = os.Remove(runPath(t, r.name+".pid"))
}

// replicaRecords puts an A record of replicaHost for each replica into
// BIND's test zone (RFC 2136 signed with the zone's TSIG key, as
// cert-manager writes its TXT records there), waits until BIND answers with
// all of them, and removes them at the end.
func replicaRecords(t *testing.T, reps []*fnReplica) {
	t.Helper()
	secret := strings.TrimSpace(string(tlsRun(t, "run", "tls", "tsig.secret")))
	host, port, _ := net.SplitHostPort(dnsServer)
	update := func(lines ...string) {
		t.Helper()
		script := fmt.Sprintf("server %s %s\nzone %s\n%s\nsend\n", host, port, tlsZone, strings.Join(lines, "\n"))
		cmd := exec.Command("nsupdate", "-y", "hmac-sha256:"+tsigKeyName+":"+secret)
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nsupdate refused %q: %v: %s", script, err, out)
		}
	}
	var add []string
	want := []string{}
	for _, r := range reps {
		add = append(add, fmt.Sprintf("update add %s. 5 A %s", replicaHost, r.ip))
		want = append(want, r.ip)
	}
	update(append([]string{"update delete " + replicaHost + ". A"}, add...)...)
	t.Cleanup(func() { update("update delete " + replicaHost + ". A") })
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, dnsServer)
	}}
	eventually(t, 30*time.Second, replicaHost+" resolving to "+strings.Join(want, ", "), func() (bool, string) {
		got, err := res.LookupHost(t.Context(), replicaHost)
		slices.Sort(got)
		return err == nil && slices.Equal(got, want), fmt.Sprintf("%v %v", got, err)
	})
}

// activeFunctionRevision is the active revision of the Function our
// Configuration depends on.
func activeFunctionRevision(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	for _, r := range list(t, gvkFunctionRevision, "", client.MatchingLabels{"pkg.crossplane.io/package": "cozystack-function-tenant-gateway"}) {
		if str(&r, "spec", "desiredState") == "Active" {
			return &r
		}
	}
	t.Fatal("no active FunctionRevision of cozystack-function-tenant-gateway")
	return nil
}

// setEndpoint sets the endpoint of a FunctionRevision, as a package runtime
// does (the External runtime leaves it to whoever runs the function).
func setEndpoint(t *testing.T, rev, endpoint string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkFunctionRevision)
	u.SetName(rev)
	patch := fmt.Appendf(nil, `{"status":{"endpoint":%q}}`, endpoint)
	if err := k8s.Status().Patch(context.Background(), u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("cannot set the endpoint of FunctionRevision %s to %s: %v", rev, endpoint, err)
	}
}

// replicaCalls is the sum of function_tenant_gateway_calls_total, every
// kind of XR and outcome, at a metrics endpoint.
func replicaCalls(t *testing.T, url string) float64 {
	t.Helper()
	rsp, err := http.Get(url) //nolint:noctx // a loopback scrape in a test
	if err != nil {
		t.Fatalf("cannot scrape %s: %v", url, err)
	}
	defer rsp.Body.Close()
	var n float64
	s := bufio.NewScanner(rsp.Body)
	for s.Scan() {
		l := s.Text()
		if !strings.HasPrefix(l, "function_tenant_gateway_calls_total{") {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndex(l, " ")+1:], 64)
		if err != nil {
			t.Fatalf("%s: cannot read %q: %v", url, l, err)
		}
		n += v
	}
	return n
}

// grpcRunner calls a function over gRPC as Crossplane does.
type grpcRunner struct {
	c fnv1.FunctionRunnerServiceClient
}

func (g grpcRunner) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return g.c.RunFunction(ctx, req)
}

// replicaClient is a client of one replica with Crossplane's client
// certificate, verifying the replica's as Crossplane does.
func replicaClient(t *testing.T, r *fnReplica) fake.Runner {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(runPath(t, "xp-client-certs/tls.crt"), runPath(t, "xp-client-certs/tls.key"))
	if err != nil {
		t.Fatalf("cannot load Crossplane's client certificate: %v", err)
	}
	caPEM, err := os.ReadFile(runPath(t, "xp-client-certs/ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	creds := credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: replicaHost})
	conn, err := grpc.NewClient("passthrough:///"+r.addr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatalf("cannot dial %s: %v", r.name, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return grpcRunner{fnv1.NewFunctionRunnerServiceClient(conn)}
}

// kindRecorder records the kinds a function's requirements name.
type kindRecorder struct {
	inner     fake.Runner
	resources map[schema.GroupVersionKind]bool
	schemas   map[string]bool
}

func (k *kindRecorder) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := k.inner.RunFunction(ctx, req)
	for _, s := range rsp.GetRequirements().GetResources() {
		k.resources[schema.FromAPIVersionAndKind(s.GetApiVersion(), s.GetKind())] = true
	}
	for _, s := range rsp.GetRequirements().GetSchemas() {
		k.schemas[s.GetApiVersion()+" "+s.GetKind()] = true
	}
	return rsp, err
}

// liveRequest is the request Crossplane would send the function at the end
// of a reconcile of ns's TenantGateway cozystack, built from the cluster as
// it is: the XR and the resources it composed (spec.crossplane.resourceRefs,
// keyed by their composition-resource-name), and the resources and schemas
// the function requires, resolved through Crossplane's requirement loop
// (test/fake) from every object of the kinds it asks for, with the shipped
// Composition's bootstrap.
func liveRequest(t *testing.T, runner fake.Runner, ns string) *fnv1.RunFunctionRequest {
	t.Helper()
	toStruct := func(u *unstructured.Unstructured) *structpb.Struct {
		s, err := structpb.NewStruct(u.Object)
		if err != nil {
			t.Fatalf("cannot convert %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		return s
	}
	xr, found := get(t, gvkTenantGateway, ns, "cozystack")
	if !found {
		t.Fatalf("no TenantGateway %s/cozystack", ns)
	}
	observed := map[string]*fnv1.Resource{}
	for _, ref := range slice(xr, "spec", "crossplane", "resourceRefs") {
		m, _ := ref.(map[string]any)
		av, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		o, found := get(t, schema.FromAPIVersionAndKind(av, kind), ns, name)
		if !found {
			t.Fatalf("%s/cozystack refers to %s %s/%s, which does not exist", ns, kind, ns, name)
		}
		observed[o.GetAnnotations()["crossplane.io/composition-resource-name"]] = &fnv1.Resource{Resource: toStruct(o)}
	}
	if len(observed) == 0 {
		t.Fatalf("%s/cozystack refers to nothing it composed: %s", ns, show(xr))
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "e2e-replicas"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: toStruct(xr)}, Resources: observed},
		Desired:  &fnv1.State{},
	}
	bootstrap, err := fake.Bootstrap([]byte(readFile("package", "configuration", "tenantgateway", "composition.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	// The kinds the function asks for are found by asking: a pass lists
	// every object of the kinds the last one named, until no new kind.
	cl := fake.Cluster{Served: map[string]bool{}}
	listed := map[schema.GroupVersionKind]bool{}
	for range 5 {
		rec := &kindRecorder{inner: runner, resources: map[schema.GroupVersionKind]bool{}, schemas: map[string]bool{}}
		for _, s := range bootstrap.GetSchemas() {
			rec.schemas[s.GetApiVersion()+" "+s.GetKind()] = true
		}
		last, rsp, _, err := cl.Reconcile(t.Context(), rec, req, bootstrap, nil)
		if err != nil {
			t.Fatalf("cannot run %s/cozystack's requirement loop: %v", ns, err)
		}
		more := false
		for s := range rec.schemas {
			if _, known := cl.Served[s]; !known {
				av, kind, _ := strings.Cut(s, " ")
				gvk := schema.FromAPIVersionAndKind(av, kind)
				_, err := k8s.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
				cl.Served[s] = err == nil
				more = true
			}
		}
		for gvk := range rec.resources {
			if listed[gvk] {
				continue
			}
			listed[gvk], more = true, true
			for _, o := range list(t, gvk, "") {
				cl.Objects = append(cl.Objects, toStruct(&o))
			}
		}
		if !more {
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					t.Fatalf("%s/cozystack: a Fatal result: %s", ns, r.GetMessage())
				}
			}
			return last
		}
	}
	t.Fatalf("the kinds %s/cozystack requires did not settle in 5 passes: %v", ns, listed)
	return nil
}

// checkDesiredGateway fails unless the Gateway a response composes has the
// listeners of the Gateway in the cluster: the request built from the live
// cluster is the one Crossplane sends.
func checkDesiredGateway(t *testing.T, rsp *fnv1.RunFunctionResponse, ns string) {
	t.Helper()
	names := func(listeners []any) []string {
		var out []string
		for _, l := range listeners {
			m, _ := l.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v", m["name"], m["hostname"]))
		}
		return out
	}
	live, _ := get(t, gvkGateway, ns, "cozystack")
	for _, r := range rsp.GetDesired().GetResources() {
		u := &unstructured.Unstructured{Object: r.GetResource().AsMap()}
		if u.GetKind() != gvkGateway.Kind {
			continue
		}
		if diff := cmp.Diff(names(slice(live, "spec", "listeners")), names(slice(u, "spec", "listeners"))); diff != "" {
			t.Errorf("the response to the request built from the cluster composes other listeners than the Gateway's (-cluster +response):\n%s", diff)
		}
		return
	}
	t.Errorf("the response to the request built from the cluster composes no Gateway: %v", rsp.GetResults())
}
