//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"slices"
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
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/test/fake"
)

// Several replicas of the function. Crossplane v2.4's
// Deployment runtime puts a function's pods behind a headless Service and
// sets the FunctionRevision's endpoint to dns:///<Service>.<namespace>:9443;
// Crossplane dials it with gRPC's round_robin balancer (its
// internal/xfn/function_runner.go), so every address the name resolves to
// is called. Under FN_REPLICAS=2 the harness' DeploymentRuntimeConfig asks
// for replicas: 2 (up.sh): Crossplane's runtime writes the Deployment, the
// ReplicaSet controller makes two pods, the harness plays the kubelet for
// each (its own network namespace and pod IP, the image's entrypoint with the
// Deployment's arguments) and serves both pod IPs for the Service's name, as
// CoreDNS serves a headless Service's.

// fnPod is one pod of the function's Deployment, as up.sh runs it.
type fnPod struct {
	proc, ip string // its process' name in the run folder (function, function-1), its pod IP
}

func (p fnPod) grpc() string    { return net.JoinHostPort(p.ip, "9443") }
func (p fnPod) metrics() string { return "http://" + net.JoinHostPort(p.ip, "8080") + "/metrics" }

// TestFunctionReplicas: the function's Deployment with two replicas, behind
// the Service Crossplane dials.
//   - The Deployment Crossplane's runtime wrote has two available replicas,
//     the revision's endpoint is still its Service's, and the name resolves
//     (Crossplane's /etc/hosts, run/hosts) to both pods.
//   - Crossplane spreads the calls: over four route changes each pod serves
//     at least 30% of every call (its own function_tenant_gateway_calls_total)
//     and some of the TenantGateway's (its own
//     function_tenant_gateway_xr_calls_total).
//   - The output is the same whichever pod answers: with TTL runs of the
//     TenantGateway on both, in steady state, nothing it composes and not
//     its status is written (their resourceVersions stay); and the request
//     Crossplane would send for it, built from the live cluster through
//     Crossplane's requirement loop (test/fake), gets byte-identical
//     responses (protobuf's deterministic encoding) from both, also with
//     every list of required resources reversed.
//   - No leader: no Lease is held by the function; with one pod's process
//     killed the other serves the next route change on its own; started
//     again, the killed one is called again.
//
// Only under FN_REPLICAS=2 (a control plane of its own:
// FN_REPLICAS=2 make e2e E2E_RUN='^TestFunctionReplicas$'); the other tests
// assume one pod.
func TestFunctionReplicas(t *testing.T) {
	if os.Getenv("FN_REPLICAS") != "2" {
		t.Skip("FN_REPLICAS is not 2: run FN_REPLICAS=2 make e2e E2E_RUN='^TestFunctionReplicas$' (docs/benchmarks.md, Several function replicas)")
	}
	const ns = "tenant-replicas"
	const apex = "replicas.example"
	ttl := functionTTL(t)
	pods := []fnPod{{proc: "function", ip: functionPodIP}, {proc: "function-1", ip: "10.244.0.6"}}
	host := replicaDeployment(t, pods)

	// Calls before the window, then a call on each: round_robin connects to
	// every address, so both take calls once both connections are ready.
	tenantNamespaces(t, ns, apex, nil)
	apply(t, envoyTenantGateway(ns, apex))
	waitGateway(t, ns, "cozystack", "the Gateway composed", func([]string, *unstructured.Unstructured) bool { return true })
	calls := func() []float64 {
		return []float64{replicaCalls(t, pods[0].metrics()), replicaCalls(t, pods[1].metrics())}
	}
	ownCalls := func() []float64 {
		return []float64{xrCalls(t, pods[0].metrics(), gvkTenantGateway.Kind, ns, "cozystack"), xrCalls(t, pods[1].metrics(), gvkTenantGateway.Kind, ns, "cozystack")}
	}
	before, ownBefore := calls(), ownCalls()

	// A window of route changes, each waited out.
	hostname := func(i int) string { return fmt.Sprintf("r%d.%s", i, apex) }
	const routes = 4
	for i := range routes {
		apply(t, httpRoute(ns, fmt.Sprintf("r%d", i), ns, "cozystack", hostname(i)))
		waitGateway(t, ns, "cozystack", "a listener for "+hostname(i), func(_ []string, gw *unstructured.Unstructured) bool {
			return listenerFor(gw, hostname(i)) != ""
		})
	}
	after, ownAfter := calls(), ownCalls()
	all := after[0] - before[0] + after[1] - before[1]
	own := []float64{ownAfter[0] - ownBefore[0], ownAfter[1] - ownBefore[1]}
	t.Logf("%d route changes: calls of every XR %v on %s (%s), %v on %s (%s); of %s/cozystack %v and %v",
		routes, after[0]-before[0], pods[0].proc, pods[0].ip, after[1]-before[1], pods[1].proc, pods[1].ip, ns, own[0], own[1])
	for i, p := range pods {
		// round_robin alternates over the ready addresses; a third leaves
		// room for calls that overlap.
		if share := (after[i] - before[i]) / all; all == 0 || share < 0.3 {
			t.Errorf("the pod at %s served %v of %v calls: round_robin spreads them over both replicas", p.ip, after[i]-before[i], all)
		}
		if own[i] == 0 {
			t.Errorf("the pod at %s served no call of %s/cozystack", p.ip, ns)
		}
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
	// And Crossplane's last writes of the XR (its status, once the
	// Gateway's is Envoy Gateway's latest): no call of it on either pod
	// and no write of it for 3 s, as TestCallsPerRouteChange waits.
	quiet(t, 3*time.Second, "the TenantGateway of "+ns, func() string {
		return fmt.Sprintf("calls %v, resourceVersion %s", ownCalls(), xrVersion(t, ns))
	})
	ownBefore = ownCalls()
	versions := composedVersions(t, ns)
	xrBefore, _ := get(t, gvkTenantGateway, ns, "cozystack")
	// Which replica a TTL run lands on depends on every other XR's calls:
	// wait for two on each (round_robin: each run is a coin toss at worst).
	eventually(t, 20*ttl+settle, "two runs of "+ns+"/cozystack on each replica", func() (bool, string) {
		now := ownCalls()
		a, b := now[0]-ownBefore[0], now[1]-ownBefore[1]
		return a >= 2 && b >= 2, fmt.Sprintf("%v and %v runs", a, b)
	})
	if diff := diffVersions(versions, composedVersions(t, ns)); diff != "" {
		xrAfter, _ := get(t, gvkTenantGateway, ns, "cozystack")
		t.Errorf("runs of %s/cozystack on both replicas, nothing changed, wrote: %s; the XR's status (-before +after):\n%s",
			ns, diff, cmp.Diff(xrBefore.Object["status"], xrAfter.Object["status"]))
	}

	// The same request to both, byte for byte.
	conns := []fake.Runner{replicaClient(t, pods[0], host), replicaClient(t, pods[1], host)}
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
		{conns[0], req, pods[0].ip}, {conns[1], req, pods[1].ip},
		{conns[0], reversed, pods[0].ip + ", lists reversed"}, {conns[1], reversed, pods[1].ip + ", lists reversed"},
		{conns[1], req, pods[1].ip + " again"},
	} {
		rsp, err := c.runner.RunFunction(t.Context(), c.req)
		if err != nil {
			t.Fatalf("cannot call the pod at %s: %v", c.what, err)
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
			t.Errorf("the pod at %s answered the same request otherwise than the one at %s (-%s +%s):\n%s", c.what, pods[0].ip, pods[0].ip, c.what, cmp.Diff(firstRsp, rsp, protocmp.Transform()))
		}
	}
	t.Logf("the request of %s/cozystack (%d required resources), 5 calls on 2 pods: %d bytes each, identical", ns, len(req.GetRequiredResources()), len(first))

	// No leader: nothing of the function's holds a Lease; one pod's process
	// killed, the other serves the next change alone; started again, the
	// killed one is called again.
	leases := &coordinationv1.LeaseList{}
	if err := k8s.List(t.Context(), leases); err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		if h := ptr.Deref(l.Spec.HolderIdentity, ""); strings.Contains(l.Name+" "+h, "function") {
			t.Errorf("Lease %s/%s (holder %q) looks like the function's: it takes none", l.Namespace, l.Name, h)
		}
	}
	stopProc(t, pods[1].proc, syscall.SIGKILL)
	survivor := replicaCalls(t, pods[0].metrics())
	changed := time.Now()
	apply(t, httpRoute(ns, "r-alone", ns, "cozystack", "alone."+apex))
	waitGateway(t, ns, "cozystack", "a listener for alone."+apex+" with the pod at "+pods[1].ip+" killed", func(_ []string, gw *unstructured.Unstructured) bool {
		return listenerFor(gw, "alone."+apex) != ""
	})
	t.Logf("the pod at %s killed: a new route's listener in %s, %v calls on the pod at %s", pods[1].ip, time.Since(changed).Round(100*time.Millisecond), replicaCalls(t, pods[0].metrics())-survivor, pods[0].ip)
	startProc(t, pods[1].proc)
	waitTCP(t, pods[1].grpc(), time.Minute)
	waitHTTP(t, pods[1].metrics(), time.Minute)
	back := replicaCalls(t, pods[1].metrics())
	// gRPC reconnects with backoff (at most 2 minutes between attempts);
	// TTL runs and a route change bring calls.
	apply(t, httpRoute(ns, "r-back", ns, "cozystack", "back."+apex))
	eventually(t, 2*time.Minute+oneTTL+settle, "the pod at "+pods[1].ip+" called again after its restart", func() (bool, string) {
		n := replicaCalls(t, pods[1].metrics())
		return n > back, fmt.Sprintf("%v calls since its restart", n-back)
	})
}

// replicaDeployment checks what Crossplane's runtime and the harness made
// of FN_REPLICAS=2 and returns the Service's host name: the active
// revision's Deployment asks for two replicas and has two available, its
// pods are at pods' IPs, the revision's endpoint is its Service's, and that
// name resolves, in Crossplane's /etc/hosts, to both pods.
func replicaDeployment(t *testing.T, pods []fnPod) string {
	t.Helper()
	rev := activeFunctionRevision(t)
	endpoint := str(rev, "status", "endpoint")
	host, _, _ := strings.Cut(strings.TrimPrefix(endpoint, "dns:///"), ":")
	if !strings.HasPrefix(endpoint, "dns:///") || !strings.HasSuffix(host, ".crossplane-system") {
		t.Fatalf("FunctionRevision %s's endpoint is %q, not its Service's (dns:///<Service>.crossplane-system:9443)", rev.GetName(), endpoint)
	}
	deps := &appsv1.DeploymentList{}
	if err := k8s.List(t.Context(), deps, client.InNamespace("crossplane-system")); err != nil {
		t.Fatal(err)
	}
	var dep *appsv1.Deployment
	for i := range deps.Items {
		for _, o := range deps.Items[i].OwnerReferences {
			if o.Name == rev.GetName() {
				dep = &deps.Items[i]
			}
		}
	}
	if dep == nil {
		t.Fatalf("no Deployment is owned by FunctionRevision %s", rev.GetName())
	}
	if got := ptr.Deref(dep.Spec.Replicas, 1); got != 2 || dep.Status.AvailableReplicas != 2 {
		t.Fatalf("Deployment %s: %d replicas, %d available; want 2 and 2 (FN_REPLICAS=2)", dep.Name, got, dep.Status.AvailableReplicas)
	}
	list := &corev1.PodList{}
	if err := k8s.List(t.Context(), list, client.InNamespace("crossplane-system"), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, len(pods))
	for _, p := range pods {
		want = append(want, p.ip)
	}
	var got []string
	for _, p := range list.Items {
		got = append(got, p.Status.PodIP)
	}
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("the IPs of Deployment %s's pods (-want +got):\n%s", dep.Name, d)
	}
	hosts, err := os.ReadFile(runPath(t, "hosts"))
	if err != nil {
		t.Fatalf("cannot read Crossplane's /etc/hosts: %v", err)
	}
	var resolved []string
	for _, l := range strings.Split(string(hosts), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && slices.Contains(f[1:], host) {
			resolved = append(resolved, f[0])
		}
	}
	slices.Sort(resolved)
	if d := cmp.Diff(want, resolved); d != "" {
		t.Fatalf("what %s resolves to for Crossplane (-want +got):\n%s", host, d)
	}
	t.Logf("FunctionRevision %s: endpoint %s, Deployment %s with 2 available replicas at %v", rev.GetName(), endpoint, dep.Name, got)
	return host
}

// activeFunctionRevision is the active revision of the Function our
// Configuration depends on.
func activeFunctionRevision(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	for _, r := range list(t, gvkFunctionRev, "", client.MatchingLabels{"pkg.crossplane.io/package": "cozystack-function-tenant-gateway"}) {
		if str(&r, "spec", "desiredState") == "Active" {
			return &r
		}
	}
	t.Fatal("no active FunctionRevision of cozystack-function-tenant-gateway")
	return nil
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

// replicaClient is a client of one pod with Crossplane's client
// certificate (its Secret crossplane-tls-client), verifying the pod's
// against Crossplane's root CA under the Service's name, as Crossplane does.
func replicaClient(t *testing.T, p fnPod, host string) fake.Runner {
	t.Helper()
	ca, clientSecret := &corev1.Secret{}, &corev1.Secret{}
	for name, s := range map[string]*corev1.Secret{"crossplane-root-ca": ca, "crossplane-tls-client": clientSecret} {
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: "crossplane-system", Name: name}, s); err != nil {
			t.Fatalf("cannot read Crossplane's Secret %s: %v", name, err)
		}
	}
	cert, err := tls.X509KeyPair(clientSecret.Data["tls.crt"], clientSecret.Data["tls.key"])
	if err != nil {
		t.Fatalf("crossplane-tls-client: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.Data["tls.crt"]) {
		t.Fatal("crossplane-root-ca holds no certificate")
	}
	creds := credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: host})
	conn, err := grpc.NewClient("passthrough:///"+p.grpc(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatalf("cannot dial the pod at %s: %v", p.ip, err)
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
