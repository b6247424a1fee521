// Package replicas checks several replicas of the function the way Crossplane
// v2.4 calls a Deployment runtime's: two function processes behind one DNS
// name, dialled with Crossplane's gRPC target form and service config. The
// end-to-end version, through Crossplane itself, is TestFunctionReplicas in
// test/e2e (docs/benchmarks.md, Several function replicas).
package replicas

import (
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
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/test/fake"
	"github.com/cozystack/function-tenant-gateway/test/render"
)

// serviceConfig is the one Crossplane v2.4 dials every function with
// (internal/xfn/function_runner.go): round_robin over the addresses the
// target resolves to, so a headless Service's pods share the calls.
const serviceConfig = `{"loadBalancingConfig": [{"round_robin": {}}], "methodConfig": [{"name": [{}], "waitForReady": true}]}`

const (
	zone = "replicas.test"
	host = "function." + zone
)

// TestReplicasShareCallsAndAnswerAlike: BIND (Debian's named, as the e2e's
// tls.sh runs it) serves two A records of one name, 127.0.0.1 and
// 127.0.0.2; a function process listens on each with mTLS; a client dials
// dns://<named>/<name>:<port> with Crossplane's service config and
// certificate, runs a render scenario through Crossplane's requirement loop
// (test/fake, the shipped Composition's bootstrap) and its final request 20
// times more. It fails unless each process serves at least a third of the
// calls (the peer address of each), every response is byte-identical in
// protobuf's deterministic encoding (both run with one --clock), and with one process killed the other
// serves every call once gRPC has seen the connection reset (the first may
// fail, as a call does whose connection breaks; Crossplane retries it). FUNCTION_BIN names the
// binary (make test sets it); otherwise it is built. Skipped without named.
func TestReplicasShareCallsAndAnswerAlike(t *testing.T) {
	named, err := exec.LookPath("named")
	if err != nil {
		t.Skip("named (Debian's bind9) is not installed")
	}
	dir := t.TempDir()
	bin := os.Getenv("FUNCTION_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "function")
		if out, err := exec.Command("go", "build", "-o", bin, "../../fn/cmd/function").CombinedOutput(); err != nil {
			t.Fatalf("cannot build the function: %v: %s", err, out)
		}
	}
	serverDir, client := certificates(t, dir)
	dnsPort, port := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1", "127.0.0.2")
	startNamed(t, named, dir, dnsPort, "127.0.0.1", "127.0.0.2")
	pids := map[string]int{}
	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		// One clock for both: the ACME order budget records when a
		// hostname was ordered (status.orders), the one input that is not
		// in the request, so the same request a second later is answered
		// otherwise by any process, one or several.
		pids[addr] = start(t, bin, filepath.Join(dir, "function-"+ip+".log"), "--address="+addr, "--tls-server-certs-dir="+serverDir, "--metrics-address=", "--clock=2026-12-01T00:00:00Z")
		waitTCP(t, addr)
	}

	target := fmt.Sprintf("dns://127.0.0.1:%d/%s:%d", dnsPort, host, port)
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(credentials.NewTLS(client)), grpc.WithDefaultServiceConfig(serviceConfig))
	if err != nil {
		t.Fatalf("cannot dial %s: %v", target, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	r := &counting{c: fnv1.NewFunctionRunnerServiceClient(conn), by: map[string]int{}}

	req := scenario(t, "http01-routes")
	// Both connections ready first, as a Crossplane that has been running
	// has them: until the second handshake is done, round_robin picks the
	// first for every call.
	deadline := time.Now().Add(30 * time.Second)
	for len(r.by) < 2 {
		if _, err := r.RunFunction(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s only %v answered", r.by)
		}
	}
	r.by = map[string]int{}
	comp, err := os.ReadFile("../../package/configuration/tenantgateway/composition.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, err := fake.Bootstrap(comp)
	if err != nil {
		t.Fatal(err)
	}
	cl := fake.Cluster{Objects: docs(t, "required.yaml", "http01-routes"), Served: map[string]bool{"gateway.networking.k8s.io/v1 TLSRoute": true}}
	final, _, _, err := cl.Reconcile(t.Context(), r, req, bootstrap, nil)
	if err != nil {
		t.Fatalf("the requirement loop failed: %v", err)
	}
	var first *fnv1.RunFunctionResponse
	var firstBytes []byte
	var firstPeer string
	for i := range 20 {
		rsp, err := r.RunFunction(t.Context(), final)
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, firstBytes, firstPeer = rsp, b, r.last
			continue
		}
		if !bytes.Equal(b, firstBytes) {
			t.Errorf("call %d (on %s) answered the same request otherwise than the first (on %s) (-first +this):\n%s", i, r.last, firstPeer, cmp.Diff(first, rsp, protocmp.Transform()))
		}
	}
	total := 0
	for _, n := range r.by {
		total += n
	}
	t.Logf("%d calls through %s: by process %v; 20 responses to the final request of %d bytes", total, target, r.by, len(firstBytes))
	for addr := range pids {
		if r.by[addr]*3 < total {
			t.Errorf("%s served %d of %d calls: round_robin spreads them over both", addr, r.by[addr], total)
		}
	}

	// No leader: one killed, the other serves on.
	killed, survivor := fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.2:%d", port)
	if err := syscall.Kill(pids[killed], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.by = map[string]int{}
	failed, late := 0, 0
	for range 10 {
		if _, err := r.RunFunction(t.Context(), final); err != nil {
			// The call that finds the killed connection before gRPC
			// has seen it reset fails, as any call does whose
			// connection breaks; Crossplane retries it. Round robin
			// may first send a call to the survivor, so a failure can
			// follow a success; none may follow a failure, which is
			// when the reset has been seen.
			if failed > 0 {
				late++
			}
			failed++
			t.Logf("a call after the kill failed: %v", err)
		}
	}
	t.Logf("%s killed: 10 calls, %d failed, by process %v", killed, failed, r.by)
	if late > 0 || failed > 5 || r.by[survivor] != 10-failed {
		t.Errorf("with %s killed, %d of 10 calls failed (%d after the reset was seen) and %s served %d: the other replica serves every call once the reset is seen", killed, failed, late, survivor, r.by[survivor])
	}
}

// counting runs calls and counts them by the peer that answered.
type counting struct {
	c  fnv1.FunctionRunnerServiceClient
	by map[string]int
	// last is the peer of the last call that succeeded.
	last string
}

func (r *counting) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var p peer.Peer
	rsp, err := r.c.RunFunction(ctx, req, grpc.Peer(&p))
	if err == nil {
		r.by[p.Addr.String()]++
		r.last = p.Addr.String()
	}
	return rsp, err
}

// scenario is the request of a render scenario (a user example or a test
// scenario, by name): its XR
// and observed resources, keyed by their composition-resource-name.
func scenario(t *testing.T, name string) *fnv1.RunFunctionRequest {
	t.Helper()
	xr := docs(t, "xr.yaml", name)
	if len(xr) != 1 {
		t.Fatalf("the xr.yaml of scenario %s holds %d objects", name, len(xr))
	}
	observed := map[string]*fnv1.Resource{}
	for _, o := range docs(t, "observed.yaml", name) {
		key := o.GetFields()["metadata"].GetStructValue().GetFields()["annotations"].GetStructValue().GetFields()["crossplane.io/composition-resource-name"].GetStringValue()
		observed[key] = &fnv1.Resource{Resource: o}
	}
	return &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "replicas"}, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr[0]}, Resources: observed}, Desired: &fnv1.State{}}
}

// docs are the YAML documents of the render scenario's file, none when it
// does not exist.
func docs(t *testing.T, file, scenario string) []*structpb.Struct {
	t.Helper()
	root, err := render.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := render.Find(root, scenario)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(sc.Dir, file))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []*structpb.Struct
	for _, d := range strings.Split(string(b), "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("%s/%s: %v", sc.Path, file, err)
		}
		if m == nil {
			continue
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// certificates makes a CA, the replicas' serving certificate for host (in a
// folder as --tls-server-certs-dir reads it) and a client's TLS
// configuration with a certificate of that CA, as Crossplane's.
func certificates(t *testing.T, dir string) (string, *tls.Config) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "replicas-ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, dns []string) (certPEM, keyPEM []byte) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "replicas"}, DNSNames: dns, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	serverDir := filepath.Join(dir, "server")
	if err := os.Mkdir(serverDir, 0o700); err != nil {
		t.Fatal(err)
	}
	crt, key := issue(2, x509.ExtKeyUsageServerAuth, []string{host})
	for name, b := range map[string][]byte{"ca.crt": caPEM, "tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(serverDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ccrt, ckey := issue(3, x509.ExtKeyUsageClientAuth, nil)
	pair, err := tls.X509KeyPair(ccrt, ckey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return serverDir, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, RootCAs: pool}
}

// freePort is a TCP and UDP port free on every address given.
func freePort(t *testing.T, ips ...string) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port //nolint:forcetypeassert // a TCP listener
		_ = l.Close()
		free := true
		for _, ip := range ips {
			addr := net.JoinHostPort(ip, strconv.Itoa(port))
			tl, err := net.Listen("tcp", addr)
			if err != nil {
				free = false
				break
			}
			_ = tl.Close()
			ul, err := net.ListenPacket("udp", addr)
			if err != nil {
				free = false
				break
			}
			_ = ul.Close()
		}
		if free {
			return port
		}
	}
	t.Fatalf("no port free on %v", ips)
	return 0
}

// startNamed runs named, authoritative for zone, with an A record of host
// for each address, and waits until it answers with all of them.
func startNamed(t *testing.T, named, dir string, port int, ips ...string) {
	t.Helper()
	records := ""
	for _, ip := range ips {
		records += "function IN A " + ip + "\n"
	}
	zoneFile := filepath.Join(dir, zone+".zone")
	z := fmt.Sprintf("$TTL 60\n@ IN SOA ns.%[1]s. hostmaster.%[1]s. 1 60 60 600 60\n@ IN NS ns.%[1]s.\nns IN A 127.0.0.1\n%[2]s", zone, records)
	conf := filepath.Join(dir, "named.conf")
	c := fmt.Sprintf(`options { directory %[1]q; pid-file %[2]q; session-keyfile %[3]q; listen-on port %[4]d { 127.0.0.1; }; listen-on-v6 { none; }; recursion no; dnssec-validation no; };
controls { };
zone %[5]q { type primary; file %[6]q; };
`, dir, filepath.Join(dir, "named.pid"), filepath.Join(dir, "session.key"), port, zone, zoneFile)
	for f, b := range map[string]string{zoneFile: z, conf: c} {
		if err := os.WriteFile(f, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start(t, named, filepath.Join(dir, "named.log"), "-g", "-n", "1", "-c", conf)
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, fmt.Sprintf("127.0.0.1:%d", port))
	}}
	want := slices.Sorted(slices.Values(ips))
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := res.LookupHost(t.Context(), host)
		slices.Sort(got)
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "named.log"))
			t.Fatalf("named does not answer %s with %v within 30s: %v %v\n%s", host, want, got, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// start starts a process, its output in log, stopped at the end of the
// test (and with the test binary, if it dies first).
func start(t *testing.T, bin, log string, args ...string) int {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
	})
	return cmd.Process.Pid
}

// waitTCP waits until something listens at addr.
func waitTCP(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens at %s after 30s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
