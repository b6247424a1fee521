package fn

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/text"
	"github.com/cozystack/function-tenant-gateway/test/fake"
)

func tenantRequest(t *testing.T, labels, spec string) *fnv1.RunFunctionRequest {
	t.Helper()
	xr := resource.MustStructJSON(`{"apiVersion":"apps.cozystack.io/v1alpha1","kind":"XTenant","metadata":{"name":"tenant-root-bob","labels":` + labels + `},"spec":` + spec + `}`)
	return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}
}

const (
	claimBob         = `{"crossplane.io/claim-name":"bob","crossplane.io/claim-namespace":"tenant-root"}`
	platformConfig   = `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":{"publishing":{"host":"example.org"}}}`
	wildcardPlatform = `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":{"publishing":{"host":"example.org","certificates":{"wildcardSecretName":"wildcard-tls"}}}}`
	rootNamespace    = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-root","labels":{"namespace.cozystack.io/gateway":"tenant-root","namespace.cozystack.io/host":"example.org"}}}`
)

func TestTenantEdge(t *testing.T) {
	type want struct {
		Results    []string
		Objects    map[string]string
		Status     map[string]any
		Conditions []string
	}
	readyTGW := &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","metadata":{"name":"tenant-bob-tenantgateway"},` +
		`"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Synced","status":"True"}],"atProvider":{"manifest":{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Available","message":""}]}}}}}`)}
	// syncFailedTGW reports its TenantGateway Ready, but its own last sync
	// failed.
	syncFailedTGW := &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","metadata":{"name":"tenant-bob-tenantgateway"},` +
		`"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Synced","status":"False"}],"atProvider":{"manifest":{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Available","message":""}]}}}}}`)}
	// classNotFoundTGW is a TenantGateway whose GatewayReady names the
	// cause while Crossplane's Ready says only Creating.
	classNotFoundTGW := &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","metadata":{"name":"tenant-bob-tenantgateway"},` +
		`"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Synced","status":"True"}],"atProvider":{"manifest":{"status":{"conditions":[` +
		`{"type":"Ready","status":"False","reason":"Creating","message":"Unready resources: gateway"},` +
		`{"type":"GatewayReady","status":"False","reason":"GatewayClassNotFound","message":"GatewayClass cilium does not exist, so no controller will accept Gateway tenant-bob/cozystack"}]}}}}}`)}
	// holder is the replica holder Object as provider-kubernetes reports it
	// with --sanitize-secrets: the observed Secret's labels, its data redacted.
	holder := func(labels string) *fnv1.Resource {
		return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","metadata":{"name":"tenant-bob-wildcard-secret"},` +
			`"status":{"atProvider":{"manifest":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"wildcard-tls","namespace":"tenant-bob","labels":` + labels + `},"data":{"redacted":null}}}}}`)}
	}
	cases := map[string]struct {
		reason   string
		labels   string
		spec     string
		cluster  []string
		observed map[string]*fnv1.Resource
		want     want
	}{
		"OwningTenant": {
			reason:   "bob with gateway: true gets his namespace and a TenantGateway, whose readiness the Tenant mirrors",
			labels:   claimBob,
			spec:     `{"gateway":true}`,
			cluster:  []string{platformConfig, rootNamespace},
			observed: map[string]*fnv1.Resource{"tenantgateway": readyTGW},
			want: want{
				Objects:    map[string]string{"namespace": "v1 Namespace tenant-bob READY_FALSE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_TRUE"},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "http01"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady True Available (CompositeAndClaim)"},
			},
		},
		"NothingObservedYet": {
			reason:  "a new owning tenant: nothing composed is ready yet and the claim says its TenantGateway has not reported readiness",
			labels:  claimBob,
			spec:    `{"gateway":true}`,
			cluster: []string{platformConfig, rootNamespace},
			want: want{
				Objects:    map[string]string{"namespace": "v1 Namespace tenant-bob READY_FALSE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_FALSE"},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "http01"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady False Creating (CompositeAndClaim): TenantGateway tenant-bob/cozystack has not reported readiness yet"},
			},
		},
		"NamespaceObserved": {
			reason:   "the Namespace is ready once Crossplane observes it; the TenantGateway's Object only once Ready and Synced",
			labels:   claimBob,
			spec:     `{"gateway":true}`,
			cluster:  []string{platformConfig, rootNamespace},
			observed: map[string]*fnv1.Resource{"namespace": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-bob"}}`)}, "tenantgateway": syncFailedTGW},
			want: want{
				Objects:    map[string]string{"namespace": "v1 Namespace tenant-bob READY_TRUE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_FALSE"},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "http01"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady True Available (CompositeAndClaim)"},
			},
		},
		"ReplicaObserved": {
			reason:   "existingSecret: the holder's sanitized status shows the marked Secret, so the data Object is composed; the holder counts as ready once it has observed the Secret",
			labels:   claimBob,
			spec:     `{"gateway":true}`,
			cluster:  []string{wildcardPlatform, rootNamespace},
			observed: map[string]*fnv1.Resource{"tenantgateway": readyTGW, "wildcard-secret": holder(`{"cozystack.io/wildcard-replica-of":"tenant-root"}`)},
			want: want{
				Objects: map[string]string{
					"namespace": "v1 Namespace tenant-bob READY_FALSE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_TRUE",
					"wildcard-secret":      "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-wildcard-secret READY_TRUE",
					"wildcard-secret-data": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-wildcard-secret-data READY_FALSE",
				},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "existingSecret"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady True Available (CompositeAndClaim)"},
			},
		},
		"SomeoneElsesSecret": {
			reason:   "existingSecret: the holder observed a Secret of that name without the mark: no data Object, a warning for the tenant on its claim",
			labels:   claimBob,
			spec:     `{"gateway":true}`,
			cluster:  []string{wildcardPlatform, rootNamespace},
			observed: map[string]*fnv1.Resource{"tenantgateway": readyTGW, "wildcard-secret": holder(`{}`)},
			want: want{
				Results: []string{"SEVERITY_WARNING: Secret tenant-bob/wildcard-tls exists without the label cozystack.io/wildcard-replica-of=tenant-root, so it is not the wildcard replica and is left as it is: the tenant's HTTPS listeners use it; delete it to get the replica of tenant-root/wildcard-tls (CompositeAndClaim)"},
				Objects: map[string]string{
					"namespace": "v1 Namespace tenant-bob READY_FALSE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_TRUE",
					"wildcard-secret": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-wildcard-secret READY_TRUE",
				},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "existingSecret"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady True Available (CompositeAndClaim)"},
			},
		},
		"MirrorsTheCause": {
			reason:   "the claim shows the cause its TenantGateway's GatewayReady gives (reason and message), read from the Object's observed manifest, not Crossplane's Creating",
			labels:   claimBob,
			spec:     `{"gateway":true}`,
			cluster:  []string{platformConfig, rootNamespace},
			observed: map[string]*fnv1.Resource{"tenantgateway": classNotFoundTGW},
			want: want{
				Objects:    map[string]string{"namespace": "v1 Namespace tenant-bob READY_FALSE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_TRUE"},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "http01"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady False GatewayClassNotFound (CompositeAndClaim): GatewayClass cilium does not exist, so no controller will accept Gateway tenant-bob/cozystack"},
			},
		},
		"MirroredMessageBounded": {
			reason:   "the TenantGateway's Ready condition is copied onto the claim, which lives in the parent's namespace: its message is cut at 1,024 bytes like every message the function writes, whatever wrote that status",
			labels:   claimBob,
			spec:     `{"gateway":true}`,
			cluster:  []string{platformConfig, rootNamespace},
			observed: map[string]*fnv1.Resource{"tenantgateway": unreadyTGW(strings.Repeat("x", 100000))},
			want: want{
				Objects:    map[string]string{"namespace": "v1 Namespace tenant-bob READY_FALSE", "tenantgateway": "kubernetes.crossplane.io/v1alpha2 Object tenant-bob-tenantgateway READY_TRUE"},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-bob", "gatewayClassName": "cilium", "certMode": "http01"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "TenantGatewayReady False Unavailable (CompositeAndClaim): " + strings.Repeat("x", 1021) + "…"},
			},
		},
		"MissingPlatformConfig": {
			reason:  "without the EnvironmentConfig the defaults apply, and a warning says so",
			labels:  claimBob,
			spec:    `{}`,
			cluster: []string{rootNamespace},
			want: want{
				Results:    []string{"SEVERITY_WARNING: EnvironmentConfig tenant-gateway-platform not found: deriving the tenant from the default platform settings (CompositeAndClaim)"},
				Objects:    map[string]string{"namespace": "v1 Namespace tenant-bob READY_FALSE"},
				Status:     map[string]any{"namespace": "tenant-bob", "apex": "bob.example.org", "gatewayNamespace": "tenant-root"},
				Conditions: []string{"Accepted True Derived (CompositeAndClaim)"},
			},
		},
		"Refused": {
			reason:  "a refusal reaches the tenant, who reads only the claim: a condition and a warning for composite and claim, then the Fatal result that keeps what was composed",
			labels:  claimBob,
			spec:    `{"gateway":true,"gatewayClass":"envoy"}`,
			cluster: []string{platformConfig, rootNamespace},
			want: want{
				Results: []string{
					`SEVERITY_WARNING: gatewayClass "envoy" is not allowed for tenants: allowed classes are ["cilium"] (gateway.className and gateway.tenantSelectableClasses) (CompositeAndClaim)`,
					`SEVERITY_FATAL: Tenant tenant-root/bob: gatewayClass "envoy" is not allowed for tenants: allowed classes are ["cilium"] (gateway.className and gateway.tenantSelectableClasses)`,
				},
				Objects:    map[string]string{},
				Conditions: []string{"Accepted False Refused (CompositeAndClaim): gatewayClass \"envoy\" is not allowed for tenants: allowed classes are [\"cilium\"] (gateway.className and gateway.tenantSelectableClasses)"},
			},
		},
		"NoClaim": {
			reason: "an XTenant made without a claim has no parent: refused",
			labels: `{}`,
			spec:   `{}`,
			want: want{
				Results: []string{"SEVERITY_FATAL: XTenant tenant-root-bob was not created through a Tenant claim (labels crossplane.io/claim-name and crossplane.io/claim-namespace are missing): create a Tenant in the parent tenant's namespace"},
				Objects: map[string]string{},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := tenantRequest(t, tc.labels, tc.spec)
			req.Observed.Resources = tc.observed
			rsp, _ := fakeCluster{objects: tc.cluster}.run(t, NewFunction(), req)
			got := want{Objects: map[string]string{}}
			for _, r := range rsp.GetResults() {
				got.Results = append(got.Results, r.GetSeverity().String()+": "+r.GetMessage()+target(r.GetTarget()))
			}
			for k, r := range rsp.GetDesired().GetResources() {
				m := r.GetResource().GetFields()
				got.Objects[k] = m["apiVersion"].GetStringValue() + " " + m["kind"].GetStringValue() + " " + m["metadata"].GetStructValue().GetFields()["name"].GetStringValue() + " " + r.GetReady().String()
			}
			if xr := rsp.GetDesired().GetComposite().GetResource(); xr != nil {
				got.Status, _ = xr.AsMap()["status"].(map[string]any)
			}
			for _, c := range rsp.GetConditions() {
				line := conditionLine(c)
				got.Conditions = append(got.Conditions, line)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// unreadyTGW is the TenantGateway Object as provider-kubernetes observes it,
// with a TenantGateway that is not Ready for the reason message.
func unreadyTGW(message string) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"kubernetes.crossplane.io/v1alpha2","kind":"Object","metadata":{"name":"tenant-bob-tenantgateway"},` +
		`"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Synced","status":"True"}],"atProvider":{"manifest":{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Unavailable","message":"` + message + `"}]}}}}}`)}
}

// conditionLine is a condition as the tests compare it: type, status,
// reason and target, and the message when it is False.
func conditionLine(c *fnv1.Condition) string {
	line := c.GetType() + " " + map[fnv1.Status]string{fnv1.Status_STATUS_CONDITION_TRUE: "True", fnv1.Status_STATUS_CONDITION_FALSE: "False"}[c.GetStatus()] + " " + c.GetReason() + target(c.GetTarget())
	if c.GetStatus() == fnv1.Status_STATUS_CONDITION_FALSE {
		line += ": " + c.GetMessage()
	}
	return line
}

// target names a result's or condition's target when it reaches the claim.
func target(t fnv1.Target) string {
	if t == fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		return " (CompositeAndClaim)"
	}
	return ""
}

// TestTenantRefusalBounded: a tenant that picks the longest name whose
// namespace and host label are valid and the longest gatewayClass the schema accepts, on a platform
// with a long list of selectable classes gets a refusal whose every message,
// on the claim and in the Fatal result, stays within 1,024 bytes.
func TestTenantRefusalBounded(t *testing.T) {
	classes := make([]string, 30)
	for i := range classes {
		classes[i] = fmt.Sprintf("%q", fmt.Sprintf("class-%02d-%s", i, strings.Repeat("c", 50)))
	}
	platform := `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},` +
		`"data":{"publishing":{"host":"example.org"},"gateway":{"tenantSelectableClasses":[` + strings.Join(classes, ",") + `]}}}`
	name := strings.Repeat("b", 63-len(".example.org"))
	req := tenantRequest(t, `{"crossplane.io/claim-name":"`+name+`","crossplane.io/claim-namespace":"tenant-root"}`, `{"gateway":true,"gatewayClass":"`+strings.Repeat("x", 253)+`"}`)
	rsp, _ := fakeCluster{objects: []string{platform, rootNamespace}}.run(t, NewFunction(), req)
	if len(rsp.GetResults()) == 0 || rsp.GetResults()[len(rsp.GetResults())-1].GetSeverity() != fnv1.Severity_SEVERITY_FATAL {
		t.Fatalf("want a refusal ending in a Fatal result, got %v", rsp.GetResults())
	}
	for _, r := range rsp.GetResults() {
		if len(r.GetMessage()) > text.MaxMessage {
			t.Errorf("%s result of %d bytes, over %d: %.80s…", r.GetSeverity(), len(r.GetMessage()), text.MaxMessage, r.GetMessage())
		}
	}
	for _, c := range rsp.GetConditions() {
		if len(c.GetMessage()) > text.MaxMessage {
			t.Errorf("condition %s of %d bytes, over %d", c.GetType(), len(c.GetMessage()), text.MaxMessage)
		}
	}
}

// TestTenantGatewayClasses: the publishing tenant's run lists the cluster's
// GatewayClasses when the platform settings name classes, and its claim
// says which match none, warning only when that changes; no other tenant
// asks for GatewayClasses.
func TestTenantGatewayClasses(t *testing.T) {
	const (
		claimRoot   = `{"crossplane.io/claim-name":"root","crossplane.io/claim-namespace":"tenant-root"}`
		edgeTunnel  = `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"edge-tunnel"},"spec":{"controllerName":"example.com/tunnel"}}`
		misspelt    = `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":{"publishing":{"host":"example.org"},"gateway":{"tenantSelectableClasses":["edge-tunnel"],"edgeTerminatedClasses":["edge-tunel"]}}}`
		correct     = `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":{"publishing":{"host":"example.org"},"gateway":{"tenantSelectableClasses":["edge-tunnel"],"edgeTerminatedClasses":["edge-tunnel"]}}}`
		message     = `The platform settings name classes that match no GatewayClass of the cluster: gateway.edgeTerminatedClasses "edge-tunel". A tenant that names a selectable class that does not exist gets a Gateway no controller accepts; an edge-terminated class that does not exist never puts a tenant in edge mode, so a Gateway whose TLS an edge terminates keeps terminating it itself. Compare with kubectl get gatewayclass`
		found       = "GatewayClassesFound True Found (CompositeAndClaim)"
		notFound    = "GatewayClassesFound False GatewayClassNotFound (CompositeAndClaim): " + message
		warning     = "SEVERITY_WARNING: " + message + " (CompositeAndClaim)"
		askedFor    = "gatewayclasses"
		shownBefore = `{"conditions":[{"type":"GatewayClassesFound","status":"False","reason":"GatewayClassNotFound","message":` + "%q" + `}]}`
	)
	type want struct {
		Requirements []string
		Classes      []string
		Results      []string
	}
	cases := map[string]struct {
		reason  string
		labels  string
		status  string
		cluster []string
		want    want
	}{
		"Misspelt": {
			reason:  "the root tenant lists the GatewayClasses and names the edge class that matches none, with a warning for composite and claim",
			labels:  claimRoot,
			cluster: []string{misspelt, rootNamespace, edgeTunnel},
			want:    want{Requirements: []string{askedFor, "parent-namespace", "platform"}, Classes: []string{notFound}, Results: []string{warning}},
		},
		"AlreadyShown": {
			reason:  "the claim already shows that message: no warning again",
			labels:  claimRoot,
			status:  fmt.Sprintf(shownBefore, message),
			cluster: []string{misspelt, rootNamespace, edgeTunnel},
			want:    want{Requirements: []string{askedFor, "parent-namespace", "platform"}, Classes: []string{notFound}},
		},
		"Fixed": {
			reason:  "every class exists: True, no warning",
			labels:  claimRoot,
			status:  fmt.Sprintf(shownBefore, message),
			cluster: []string{correct, rootNamespace, edgeTunnel},
			want:    want{Requirements: []string{askedFor, "parent-namespace", "platform"}, Classes: []string{found}},
		},
		"NothingListed": {
			reason:  "settings that list no class: nothing to look up, True",
			labels:  claimRoot,
			cluster: []string{platformConfig, rootNamespace},
			want:    want{Requirements: []string{"parent-namespace", "platform"}, Classes: []string{found}},
		},
		"OtherTenant": {
			reason:  "any other tenant reads no GatewayClass and says nothing of them",
			labels:  claimBob,
			cluster: []string{misspelt, rootNamespace, edgeTunnel},
			want:    want{Requirements: []string{"parent-namespace", "platform"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := tenantRequest(t, tc.labels, `{}`)
			if tc.status != "" {
				req.Observed.Composite.Resource.Fields["status"] = structpb.NewStructValue(resource.MustStructJSON(tc.status))
			}
			rsp, _ := fakeCluster{objects: tc.cluster}.run(t, NewFunction(), req)
			var got want
			for k := range rsp.GetRequirements().GetResources() {
				got.Requirements = append(got.Requirements, k)
			}
			sort.Strings(got.Requirements)
			for _, r := range rsp.GetResults() {
				got.Results = append(got.Results, r.GetSeverity().String()+": "+r.GetMessage()+target(r.GetTarget()))
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() != "GatewayClassesFound" {
					continue
				}
				line := conditionLine(c)
				got.Classes = append(got.Classes, line)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTenantWaitsForGatewayClasses: the call that first reads settings
// naming classes only asks for the GatewayClasses; it composes and warns
// nothing until they are read, so no class is reported missing from an
// observation that has not listed them yet.
func TestTenantWaitsForGatewayClasses(t *testing.T) {
	const platform = `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":{"publishing":{"host":"example.org"},"gateway":{"edgeTerminatedClasses":["cilium"]}}}`
	cl := fake.Cluster{}
	for _, o := range []string{platform, rootNamespace, ciliumClass} {
		cl.Objects = append(cl.Objects, resource.MustStructJSON(o))
	}
	req := tenantRequest(t, `{"crossplane.io/claim-name":"root","crossplane.io/claim-namespace":"tenant-root"}`, `{"gateway":true}`)
	f := NewFunction()
	var asked [][]string
	for call := range 3 {
		rsp, err := f.RunFunction(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for k := range rsp.GetRequirements().GetResources() {
			names = append(names, k)
		}
		sort.Strings(names)
		asked = append(asked, names)
		composed := len(rsp.GetDesired().GetResources()) > 0 || len(rsp.GetResults()) > 0 || len(rsp.GetConditions()) > 0
		if want := call == 2; composed != want {
			t.Errorf("call %d composed: %t, want %t (%d resources, %d results, %d conditions)", call+1, composed, want, len(rsp.GetDesired().GetResources()), len(rsp.GetResults()), len(rsp.GetConditions()))
		}
		req.RequiredResources, _ = cl.Resolve(rsp.GetRequirements())
	}
	want := [][]string{{"parent-namespace", "platform"}, {"clusterissuers", "gatewayclasses", "parent-namespace", "platform"}, {"clusterissuers", "gatewayclasses", "parent-namespace", "platform"}}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("requirements by call: -want, +got:\n%s", diff)
	}
}

// TestTenantCozystackValues: the publishing tenant's run, when it owns a
// Gateway, lists the cluster's ClusterIssuers and its claim says which
// HTTP-01 solver disagrees with gateway.className; a nested tenant given an
// apex of its own reads the publishing namespace and is refused a host in
// the zone its host label names though publishing.host does not; no other
// tenant asks for either.
func TestTenantCozystackValues(t *testing.T) {
	const (
		claimRoot = `{"crossplane.io/claim-name":"root","crossplane.io/claim-namespace":"tenant-root"}`
		claimShop = `{"crossplane.io/claim-name":"shop","crossplane.io/claim-namespace":"tenant-alice-x"}`
		// What Cozystack's platform chart renders for gateway.className cilium.
		pinned = `{"apiVersion":"cert-manager.io/v1","kind":"ClusterIssuer","metadata":{"name":"letsencrypt-prod"},"spec":{"acme":{"server":"https://acme-v02.api.letsencrypt.org/directory","privateKeySecretRef":{"name":"letsencrypt-prod"},` +
			`"solvers":[{"http01":{"gatewayHTTPRoute":{"parentRefs":[{"kind":"Gateway","name":"cozystack","namespace":"tenant-root","sectionName":"http"}]}}}]}}}`
		// This project's settings moved to the edge class alone.
		edgePlatform = `{"apiVersion":"apiextensions.crossplane.io/v1beta1","kind":"EnvironmentConfig","metadata":{"name":"tenant-gateway-platform"},"data":{"publishing":{"host":"example.org"},"gateway":{"className":"edge-tunnel","edgeTerminatedClasses":["edge-tunnel"]}}}`
		edgeClass    = `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"edge-tunnel"},"spec":{"controllerName":"example.com/tunnel"}}`
		// The publishing namespace as Cozystack's charts labelled it, from their publishing.host.
		cozystackRoot = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-root","labels":{"namespace.cozystack.io/gateway":"tenant-root","namespace.cozystack.io/host":"example.com"}}}`
		parentX       = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-alice-x","labels":{"namespace.cozystack.io/gateway":"tenant-alice","namespace.cozystack.io/host":"x.alice.example.com"}}}`
		differ        = `CozystackValuesAgree False ValuesDiffer (CompositeAndClaim): The platform settings and Cozystack's platform values disagree: ClusterIssuer letsencrypt-prod (spec.acme.solvers[0]) pins its HTTP-01 challenges to listener "http" of Gateway tenant-root/cozystack, as Cozystack renders for a gateway.className that is not edge-terminated, but gateway.className "edge-tunnel" here is edge-terminated (gateway.edgeTerminatedClasses), so the Gateway has no listener http: every HTTP-01 certificate it issues stops; set gateway.className to one class in both`
		refused       = `Accepted False Refused (CompositeAndClaim): spec.host "shop.bob.example.com" must equal or be under the parent tenant's host "x.alice.example.com" (namespace tenant-alice-x): it is outside publishing.host "example.org" but inside "example.com", the host label of the publishing tenant's namespace tenant-root, so the platform settings and Cozystack's values disagree on the platform's zone, and a name in it may be another tenant's; set publishing.host to one apex in both`
	)
	type want struct {
		Requirements []string
		Conditions   []string
	}
	cases := map[string]struct {
		reason  string
		labels  string
		spec    string
		cluster []string
		want    want
	}{
		"PublishingOnEdgeAlone": {
			reason:  "gateway.className moved to the edge class in these settings only: the ClusterIssuer still pins http, and the claim says so",
			labels:  claimRoot,
			spec:    `{"gateway":true}`,
			cluster: []string{edgePlatform, rootNamespace, edgeClass, pinned},
			want:    want{Requirements: []string{"clusterissuers", "gatewayclasses", "parent-namespace", "platform"}, Conditions: []string{"Accepted True Derived (CompositeAndClaim)", differ}},
		},
		"PublishingAgrees": {
			labels:  claimRoot,
			spec:    `{"gateway":true}`,
			cluster: []string{platformConfig, rootNamespace, pinned},
			want:    want{Requirements: []string{"clusterissuers", "parent-namespace", "platform"}, Conditions: []string{"Accepted True Derived (CompositeAndClaim)", "CozystackValuesAgree True Agree (CompositeAndClaim)"}},
		},
		"NestedApexInTheLabelsZone": {
			reason:  "alice's nested tenant given a host in bob's zone under example.com, the publishing namespace's host label, while publishing.host says example.org",
			labels:  claimShop,
			spec:    `{"gateway":true,"host":"shop.bob.example.com"}`,
			cluster: []string{platformConfig, cozystackRoot, parentX},
			want:    want{Requirements: []string{"parent-namespace", "platform", "publishing-namespace"}, Conditions: []string{refused}},
		},
		"OtherTenant": {
			labels:  claimBob,
			spec:    `{"gateway":true}`,
			cluster: []string{platformConfig, rootNamespace, pinned},
			want:    want{Requirements: []string{"parent-namespace", "platform"}, Conditions: []string{"Accepted True Derived (CompositeAndClaim)"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _ := fakeCluster{objects: tc.cluster}.run(t, NewFunction(), tenantRequest(t, tc.labels, tc.spec))
			var got want
			for k := range rsp.GetRequirements().GetResources() {
				got.Requirements = append(got.Requirements, k)
			}
			sort.Strings(got.Requirements)
			for _, c := range rsp.GetConditions() {
				if c.GetType() != "Accepted" && c.GetType() != "CozystackValuesAgree" {
					continue
				}
				line := conditionLine(c)
				got.Conditions = append(got.Conditions, line)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
