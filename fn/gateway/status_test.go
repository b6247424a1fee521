package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

const uid = "7f7586f8-b336-5a17-b4c5-11def6fef8dc"

var (
	wwwListener = HostListenerName("www.example.org")
	wwwCert     = CertificateKey(wwwListener)
	accepted    = map[string]string{"Accepted": "True", "Programmed": "True"}
)

// someClass is a GatewayClass of an implementation without quirks, which
// the tests' TenantGateways get unless they name one.
var someClass = &Class{Name: "cilium", ControllerName: "example.com/gateway-controller"}

// run composes tenant-root's TenantGateway cozystack; a test that sets no
// GatewayClass gets someClass.
func run(t *testing.T, in Input) *Output {
	t.Helper()
	if in.GatewayClass == nil {
		in.GatewayClass = someClass
	}
	return runNoClass(t, in)
}

// runNoClass is run on a cluster without the GatewayClass named.
func runNoClass(t *testing.T, in Input) *Output {
	t.Helper()
	in.Name, in.Namespace, in.UID, in.CertManagerNamespace = "cozystack", "tenant-root", uid, "cozy-cert-manager"
	if in.Spec.Apex == "" {
		in.Spec.Apex = "example.org"
	}
	if in.Routes == nil {
		in.Routes = []Route{routeTo("tenant-root", "www", "www.example.org")}
	}
	out, err := Compose(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func condition(out *Output, typ ConditionType) Condition {
	for _, c := range out.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return Condition{}
}

func TestListenerStatusAndGatewayReady(t *testing.T) {
	type want struct {
		Reasons      []string
		GatewayReady Condition
		Ready        bool
	}
	gw := func(conds map[string]string, listeners map[string]map[string]string) map[string]*ObservedResource {
		return map[string]*ObservedResource{KeyGateway: {Conditions: conds, Listeners: listeners}}
	}
	cilium := &Class{Name: "cilium", ControllerName: CiliumControllerName}
	envoy := &Class{Name: "envoy", ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"}
	cases := map[string]struct {
		reason   string
		class    *Class
		noClass  bool
		observed map[string]*ObservedResource
		want     want
	}{
		"ClassNotFound": {
			reason:  "The GatewayClass does not exist: GatewayClassNotFound at once, before the Gateway sits unaccepted",
			noClass: true,
			want: want{
				Reasons:      []string{"http:false:Pending", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonGatewayClassNotFound, Message: "GatewayClass cilium does not exist, so no controller will accept Gateway tenant-root/cozystack; set spec.gatewayClassName to a class of the cluster (kubectl get gatewayclass)"},
			},
		},
		"NotObserved": {
			reason: "A Gateway not observed yet: every listener Pending, GatewayNotAccepted",
			class:  cilium,
			want: want{
				Reasons:      []string{"http:false:Pending", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonGatewayNotAccepted, Message: "Underlying Gateway tenant-root/cozystack has not been accepted by its controller yet"},
			},
		},
		"NotProgrammed": {
			reason: "Accepted but not Programmed: GatewayNotProgrammed",
			class:  cilium,
			observed: gw(map[string]string{"Accepted": "True", "Programmed": "False"}, map[string]map[string]string{
				"http": {"Accepted": "False"}, wwwListener: {"Accepted": "True", "Programmed": "False"},
			}),
			want: want{
				Reasons:      []string{"http:false:NotAccepted", wwwListener + ":false:NotProgrammed"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonGatewayNotProgrammed, Message: "Underlying Gateway tenant-root/cozystack has not been programmed by its controller yet"},
			},
		},
		"NotProgrammedWithTheControllersWords": {
			reason: "GatewayNotProgrammed carries the Gateway's own reason and message (a LoadBalancer pending)",
			class:  cilium,
			observed: map[string]*ObservedResource{KeyGateway: {
				Conditions: map[string]string{"Accepted": "True", "Programmed": "False"},
				Reasons:    map[string]string{"Accepted": "Accepted", "Programmed": "AddressNotAssigned"},
				Messages:   map[string]string{"Programmed": "No addresses have been assigned to the Gateway"},
			}},
			want: want{
				Reasons:      []string{"http:false:Pending", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonGatewayNotProgrammed, Message: "Underlying Gateway tenant-root/cozystack has not been programmed by its controller yet: AddressNotAssigned: No addresses have been assigned to the Gateway"},
			},
		},
		"CertificateNotReady": {
			reason: "A listener whose Certificate is not Ready says so with cert-manager's reason and message, in status.listeners and in ListenersNotReady",
			class:  envoy,
			observed: map[string]*ObservedResource{
				KeyGateway: {Conditions: accepted, Listeners: map[string]map[string]string{
					"http": accepted, wwwListener: {"Accepted": "True", "Programmed": "False", "ResolvedRefs": "False"},
				}},
				wwwCert: {
					Conditions: map[string]string{"Ready": "False"},
					Reasons:    map[string]string{"Ready": "DoesNotExist"},
					Messages:   map[string]string{"Ready": "Issuing certificate as Secret does not exist"},
				},
			},
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:CertificateNotReady:DoesNotExist: Issuing certificate as Secret does not exist"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (CertificateNotReady: DoesNotExist: Issuing certificate as Secret does not exist) (see status.listeners)"},
			},
		},
		"CertificateNothingSaid": {
			reason: "A Certificate cert-manager has said nothing about yet leaves the listener to the Gateway's conditions",
			class:  envoy,
			observed: map[string]*ObservedResource{
				KeyGateway: {Conditions: accepted, Listeners: map[string]map[string]string{"http": accepted, wwwListener: {"Accepted": "True", "Programmed": "False"}}},
				wwwCert:    {Conditions: map[string]string{}},
			},
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:NotProgrammed"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (NotProgrammed) (see status.listeners)"},
			},
		},
		"CertificateReady": {
			reason: "A Ready Certificate leaves the listener to the Gateway's conditions",
			class:  envoy,
			observed: map[string]*ObservedResource{
				KeyGateway: {Conditions: accepted, Listeners: map[string]map[string]string{"http": accepted, wwwListener: accepted}},
				wwwCert:    {Conditions: map[string]string{"Ready": "True"}},
			},
			want: want{
				Reasons:      []string{"http:true:Ready", wwwListener + ":true:Ready"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Status: true, Reason: ReasonReconciled, Message: "Gateway tenant-root/cozystack programmed with 2 listeners"},
				Ready:        true,
			},
		},
		"OneListenerNotProgrammed": {
			reason: "A ready Gateway with one listener not programmed: ListenersNotReady naming it; Cilium's ResolvedRefs is ignored",
			class:  cilium,
			observed: gw(accepted, map[string]map[string]string{
				"http": {"Accepted": "True", "Programmed": "True", "ResolvedRefs": "False"}, wwwListener: {"Accepted": "True", "Programmed": "False"},
			}),
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:NotProgrammed"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (NotProgrammed) (see status.listeners)"},
			},
		},
		"AllReady": {
			reason: "Accepted, Programmed and every listener ready: Reconciled, and the Gateway is ready; Cilium's ResolvedRefs=False is ignored",
			class:  cilium,
			observed: gw(accepted, map[string]map[string]string{
				"http": accepted, wwwListener: {"Accepted": "True", "Programmed": "True", "ResolvedRefs": "False"},
			}),
			want: want{
				Reasons:      []string{"http:true:Ready", wwwListener + ":true:Ready"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Status: true, Reason: ReasonReconciled, Message: "Gateway tenant-root/cozystack programmed with 2 listeners"},
				Ready:        true,
			},
		},
		"RefsNotResolved": {
			reason: "Another implementation's ResolvedRefs=False (a Secret not issued yet) makes the listener not ready",
			class:  envoy,
			observed: gw(accepted, map[string]map[string]string{
				"http": accepted, wwwListener: {"Accepted": "True", "Programmed": "True", "ResolvedRefs": "False"},
			}),
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:RefsNotResolved"},
				GatewayReady: Condition{Type: ConditionGatewayReady, Reason: ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (RefsNotResolved) (see status.listeners)"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, compose := Input{Observed: tc.observed, GatewayClass: tc.class}, run
			if tc.noClass {
				compose = runNoClass
			}
			out := compose(t, in)
			got := want{GatewayReady: condition(out, ConditionGatewayReady), Ready: out.Ready[KeyGateway]}
			for _, l := range out.ListenerStatus {
				r := strings.Join([]string{l.Name, strconv.FormatBool(l.Ready), l.Reason}, ":")
				if l.Message != "" {
					r += ":" + l.Message
				}
				got.Reasons = append(got.Reasons, r)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReadiness(t *testing.T) {
	ready := map[string]string{"Ready": "True"}
	out := run(t, Input{
		Spec: v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-a"}},
		NamedNamespaces: map[string]*Namespace{
			"tenant-root": {Name: "tenant-root"},
			"cozy-a":      {Name: "cozy-a"},
		},
		Observed: map[string]*ObservedResource{
			KeyIssuer:                   {Conditions: ready},
			wwwCert:                     {Conditions: map[string]string{"Ready": "False"}},
			KeyRedirect:                 {},
			NamespaceKey("tenant-root"): {Conditions: map[string]string{"Ready": "True", "Synced": "True"}},
			NamespaceKey("cozy-a"):      {Conditions: map[string]string{"Ready": "True", "Synced": "False"}},
		},
	})
	want := map[string]bool{
		KeyGateway:                  false, // not observed
		KeyIssuer:                   true,
		wwwCert:                     false, // Ready False
		KeyRedirect:                 true,  // exists
		NamespaceKey("tenant-root"): true,
		NamespaceKey("cozy-a"):      false, // not Synced
	}
	if diff := cmp.Diff(want, out.Ready); diff != "" {
		t.Errorf("readiness per resource: -want, +got:\n%s", diff)
	}
}

func TestOwnershipGuard(t *testing.T) {
	cases := map[string]struct {
		reason  string
		probes  map[string]Probe
		obs     map[string]*ObservedResource
		keys    []string
		message string
	}{
		"NothingThere": {
			reason: "Nothing at the derived names: everything is composed",
			probes: map[string]Probe{},
			keys:   []string{KeyGateway, KeyIssuer, wwwCert, KeyRedirect},
		},
		"OursAlready": {
			reason: "An object whose controller is this TenantGateway is ours",
			probes: map[string]Probe{KeyGateway: {Exists: true, ControllerUID: uid}},
			keys:   []string{KeyGateway, KeyIssuer, wwwCert, KeyRedirect},
		},
		"ForeignGatewayAndCertificate": {
			reason: "A hand-made Gateway and another owner's Certificate are left alone and reported; the rest is composed",
			probes: map[string]Probe{KeyGateway: {Exists: true}, wwwCert: {Exists: true, ControllerUID: "someone-else"}},
			keys:   []string{KeyIssuer, KeyRedirect},
			message: "Gateway tenant-root/cozystack exists but is not owned by TenantGateway cozystack; refusing to take over (delete it manually if you want the function to manage it); " +
				"Certificate tenant-root/cozystack-www-8a59b0a3-tls exists but is not owned by TenantGateway cozystack; refusing to take over (delete it manually if you want the function to manage it)",
		},
		"ObservedIsOurs": {
			reason: "What Crossplane observed under its composition resource name is ours, whatever a probe says",
			probes: map[string]Probe{KeyIssuer: {Exists: true, ControllerUID: "stale"}},
			obs:    map[string]*ObservedResource{KeyIssuer: {}},
			keys:   []string{KeyGateway, KeyIssuer, wwwCert, KeyRedirect},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := run(t, Input{Probes: tc.probes, Observed: tc.obs})
			var keys []string
			for _, r := range out.Resources {
				keys = append(keys, r.Key)
			}
			if diff := cmp.Diff(tc.keys, keys); diff != "" {
				t.Errorf("%s\ncomposed: -want, +got:\n%s", tc.reason, diff)
			}
			c := condition(out, ConditionGatewayReady)
			if tc.message == "" {
				if c.Reason == ReasonReconcileError {
					t.Errorf("%s\nunexpected ReconcileError: %s", tc.reason, c.Message)
				}
				return
			}
			if diff := cmp.Diff(Condition{Type: ConditionGatewayReady, Reason: ReasonReconcileError, Message: tc.message}, c); diff != "" {
				t.Errorf("%s\nGatewayReady: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("ProbesNeeded", func(t *testing.T) {
		in := Input{Name: "cozystack", Namespace: "tenant-root", Spec: v1alpha1.TenantGatewaySpec{Apex: "example.org"}, Observed: map[string]*ObservedResource{KeyGateway: {}}}
		out, err := Compose(in)
		if err != nil {
			t.Fatal(err)
		}
		var need []string
		for _, r := range out.Probes {
			need = append(need, r.Key)
		}
		if diff := cmp.Diff([]string{KeyIssuer, KeyRedirect}, need); diff != "" {
			t.Errorf("probes: only what is not observed as ours: -want, +got:\n%s", diff)
		}
	})
}

func TestNamespacePatches(t *testing.T) {
	mine := map[string]string{AnnotationAttachedBy: "tenant-root"}
	gwLabel := map[string]string{LabelNamespaceGateway: "tenant-root"}
	in := Input{
		Spec: v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-new", "cozy-ours", "cozy-tenant", "cozy-other", "cozy-missing"}},
		NamedNamespaces: map[string]*Namespace{
			"tenant-root":  {Name: "tenant-root"},
			"cozy-new":     {Name: "cozy-new"},
			"cozy-ours":    {Name: "cozy-ours", Labels: gwLabel, Annotations: mine},
			"cozy-tenant":  {Name: "cozy-tenant", Labels: gwLabel},
			"cozy-other":   {Name: "cozy-other", Labels: map[string]string{LabelNamespaceGateway: "tenant-x"}, Annotations: map[string]string{AnnotationAttachedBy: "tenant-x"}},
			"cozy-missing": nil,
			"cozy-left":    {Name: "cozy-left", Labels: gwLabel, Annotations: mine},
			"cozy-done":    {Name: "cozy-done"},
		},
		Observed: map[string]*ObservedResource{NamespaceKey("cozy-left"): {}, NamespaceKey("cozy-done"): {}, NamespaceKey("cozy-deleted"): {}},
	}
	out := run(t, in)
	got := map[string]string{}
	for _, r := range out.Resources {
		ns, ok := NamespaceOfKey(r.Key)
		if !ok {
			continue
		}
		got[ns] = manifestOf(t, r)
	}
	attach := `{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{"cozystack.io/gateway-attached-by":"tenant-root"},"labels":{"namespace.cozystack.io/gateway":"tenant-root"},"name":"%s"}}`
	release := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"}}`
	want := map[string]string{
		"tenant-root": sprintf(attach, "tenant-root"), // unlabelled: ours to label
		"cozy-new":    sprintf(attach, "cozy-new"),
		"cozy-ours":   sprintf(attach, "cozy-ours"),  // labelled by us: kept
		"cozy-left":   sprintf(release, "cozy-left"), // left the list, still marked: released
		// cozy-tenant: labelled by the tenant layer; cozy-other: by another
		// TenantGateway; cozy-missing: does not exist yet; cozy-done and
		// cozy-deleted: marks gone, so their Objects leave.
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("namespace patches (namespace → manifest): -want, +got:\n%s", diff)
	}
}

func TestConditions(t *testing.T) {
	t.Run("ClassWithoutTLSRoute", func(t *testing.T) {
		spec := v1alpha1.TenantGatewaySpec{TLSPassthroughServices: []v1alpha1.DNSLabel{"api"}}
		got := condition(run(t, Input{Spec: spec, GatewayClass: &Class{Name: "envoy-lite", SupportedFeatures: []string{"Gateway", "HTTPRoute"}}}), ConditionGatewayReady)
		want := Condition{Type: ConditionGatewayReady, Reason: ReasonGatewayClassUnsupported,
			Message: "GatewayClass envoy-lite lists its supported features but not TLSRoute, so nothing would serve the TLS passthrough listeners of Gateway tenant-root/cozystack"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
		// A class that lists no features is not judged, nor one with TLSRoute,
		// nor a Gateway without passthrough listeners.
		for _, in := range []Input{
			{Spec: spec, GatewayClass: &Class{Name: "old"}},
			{Spec: spec, GatewayClass: &Class{Name: "full", SupportedFeatures: []string{"HTTPRoute", "TLSRoute"}}},
			{GatewayClass: &Class{Name: "envoy-lite", SupportedFeatures: []string{"HTTPRoute"}}},
		} {
			if c := condition(run(t, in), ConditionGatewayReady); c.Reason == ReasonGatewayClassUnsupported {
				t.Errorf("class %s judged unsupported: %s", in.GatewayClass.Name, c.Message)
			}
		}
	})
	t.Run("GuardBeforeClass", func(t *testing.T) {
		// A refused object and a missing class: ReconcileError first.
		out := run(t, Input{Probes: map[string]Probe{KeyIssuer: {Exists: true}}})
		if c := condition(out, ConditionGatewayReady); c.Reason != ReasonReconcileError {
			t.Errorf("GatewayReady %s, want %s", c.Reason, ReasonReconcileError)
		}
	})
	t.Run("HostnamesNotServed", func(t *testing.T) {
		out := run(t, Input{Routes: []Route{routeTo("tenant-root", "r", "www.example.org", "shop.example.net", "Bad_Name.example.org", "*.example.org")}})
		want := Condition{Type: ConditionRoutesAccepted, Reason: ReasonHostnamesNotServed,
			Message: "hostnames that can never be served (see status.hostnames): *.example.org (Invalid), Bad_Name.example.org (Invalid), shop.example.net (OutsideApex)"}
		if diff := cmp.Diff(want, condition(out, ConditionRoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("ChildApexOutsideApex", func(t *testing.T) {
		out := run(t, Input{Namespaces: []Namespace{labelled("tenant-x", "x.example.net")}})
		want := Condition{Type: ConditionRoutesAccepted, Reason: ReasonChildApexOutsideApex,
			Message: "child tenant apexes outside the apex get no listener (see status.childApexes): x.example.net (namespace tenant-x)"}
		if diff := cmp.Diff(want, condition(out, ConditionRoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("EveryCauseInOrder", func(t *testing.T) {
		// Every cause at once, each with more items than fit: the reason
		// is the first by precedence, and the message names every cause
		// within the bound.
		var routes []Route
		for i := range 200 {
			h := sprintf("h%03d.example.org", i)
			routes = append(routes, routeTo("cozy-a", sprintf("w%03d", i), h), routeTo("tenant-root", sprintf("l%03d", i), h))
			tls := routeTo("tenant-root", sprintf("t%03d", i), sprintf("t%03d.example.org", i))
			tls.Kind = KindTLSRoute
			routes = append(routes, tls, routeTo("tenant-root", sprintf("o%03d", i), sprintf("o%03d.example.net", i)))
		}
		nss := []Namespace{{Name: "cozy-other", Labels: map[string]string{LabelNamespaceGateway: "tenant-x"}}}
		named := map[string]*Namespace{"cozy-other": {Name: "cozy-other", Labels: map[string]string{LabelNamespaceGateway: "tenant-x"}, Annotations: map[string]string{AnnotationAttachedBy: "tenant-x"}}}
		for i := range 200 {
			nss = append(nss, labelled(sprintf("tenant-x%03d", i), sprintf("x%03d.example.net", i)))
		}
		out := run(t, Input{Spec: v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-a", "cozy-other"}}, Routes: routes, Namespaces: nss, NamedNamespaces: named})
		c := condition(out, ConditionRoutesAccepted)
		if c.Reason != ReasonHostnameConflict || len(c.Message) > MaxMessage {
			t.Errorf("RoutesAccepted %s with %d bytes, want %s within %d", c.Reason, len(c.Message), ReasonHostnameConflict, MaxMessage)
		}
		at := -1
		for _, part := range []string{"hostname conflicts: ", "match no listener", "another Gateway's", "can never be served", "child tenant apexes outside"} {
			i := strings.Index(c.Message, part)
			if i <= at {
				t.Errorf("message does not name %q after the causes before it: %s", part, c.Message)
			}
			at = i
		}
	})
	t.Run("HostnameConflict", func(t *testing.T) {
		out := run(t, Input{
			Spec:       v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-b", "tenant-a"}},
			Routes:     []Route{routeTo("tenant-a", "r", "x.example.org", "y.example.org"), routeTo("cozy-b", "s", "y.example.org", "x.example.org")},
			Namespaces: nil,
		})
		want := Condition{Type: ConditionRoutesAccepted, Reason: ReasonHostnameConflict,
			Message: "hostname conflicts: HTTPRoute/tenant-a/r lost x.example.org to HTTPRoute/cozy-b/s; HTTPRoute/tenant-a/r lost y.example.org to HTTPRoute/cozy-b/s"}
		if diff := cmp.Diff(want, condition(out, ConditionRoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("NoMatchingParent", func(t *testing.T) {
		tls := Route{Kind: KindTLSRoute, Namespace: "tenant-root", Name: "api", ParentRefs: []ParentRef{{Name: "cozystack"}}, Hostnames: []string{"api.example.org"}}
		out := run(t, Input{Spec: v1alpha1.TenantGatewaySpec{CertMode: v1alpha1.CertModeEdge}, Routes: []Route{tls}})
		want := Condition{Type: ConditionRoutesAccepted, Reason: ReasonNoMatchingParent,
			Message: "routes target this Gateway but match no listener for these hostnames (see status.hostnames): TLSRoute/tenant-root/api (api.example.org)"}
		if diff := cmp.Diff(want, condition(out, ConditionRoutesAccepted)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
	t.Run("ListenerLimitExceeded", func(t *testing.T) {
		out := run(t, Input{Routes: []Route{routeTo("tenant-root", "apps", hosts(70, "app%02d.example.org")...)}})
		want := Condition{Type: ConditionListenersReady, Reason: ReasonListenerLimitExceeded,
			Message: "7 hostnames or child apexes were left out: a Gateway holds at most 64 listeners (see status.hostnames and status.childApexes); certMode dns01 serves every hostname under the apex with a fixed set of listeners"}
		if diff := cmp.Diff(want, condition(out, ConditionListenersReady)); diff != "" {
			t.Errorf("-want, +got:\n%s", diff)
		}
	})
}

func TestWarningsOnlyOnChange(t *testing.T) {
	routes := append([]Route{routeTo("tenant-a", "r", "x.example.org"), routeTo("cozy-b", "s", "x.example.org")},
		routeTo("tenant-root", "apps", hosts(70, "app%02d.example.org")...))
	spec := v1alpha1.TenantGatewaySpec{AttachedNamespaces: []v1alpha1.DNSLabel{"cozy-b", "tenant-a"}}
	first := run(t, Input{Spec: spec, Routes: routes})
	want := []string{
		"hostname conflicts changed; 1 contested now: x.example.org: HTTPRoute/cozy-b/s keeps it, HTTPRoute/tenant-a/r refused",
		// 71 hostnames, 63 HTTPS listeners shared round-robin: the owner's
		// app00 and cozy-b's x.example.org first, then the owner's others.
		"hostnames and child apexes left out changed; 8 left out now: app62.example.org (OverListenerLimit), app63.example.org (OverListenerLimit), app64.example.org (OverListenerLimit), app65.example.org (OverListenerLimit), app66.example.org (OverListenerLimit), app67.example.org (OverListenerLimit), app68.example.org (OverListenerLimit), app69.example.org (OverListenerLimit)",
		"Gateway tenant-root/cozystack now has 64 listeners, close to the limit of 64; certMode dns01 serves every hostname under the apex with a fixed set of listeners",
	}
	if diff := cmp.Diff(want, first.Warnings); diff != "" {
		t.Errorf("first run: -want, +got:\n%s", diff)
	}

	// The next run sees what the first wrote: nothing changed, nothing said.
	prev := PreviousStatus{Digests: first.Digests, Listeners: map[string]string{}}
	names := map[string]string{}
	var order []string
	for _, l := range first.ListenerStatus {
		prev.Listeners[l.Name] = l.Hostname
		names[l.Name] = l.Hostname
		order = append(order, l.Name)
	}
	second := run(t, Input{Spec: spec, Routes: routes, Previous: prev, Observed: map[string]*ObservedResource{KeyGateway: {ListenerNames: order, ListenerHostnames: names}}})
	if len(second.Warnings) != 0 {
		t.Errorf("second run, nothing changed: want no warnings, got %q", second.Warnings)
	}
}

func TestHostnameStatusIsBounded(t *testing.T) {
	routes := []Route{routeTo("tenant-root", "apps", hosts(1500, "app%04d.example.org")...), routeTo("tenant-root", "bad", "zzz.example.net")}
	out := run(t, Input{Spec: v1alpha1.TenantGatewaySpec{CertMode: v1alpha1.CertModeExistingSecret, WildcardSecretRef: &v1alpha1.LocalSecretReference{Name: "w"}}, Routes: routes})
	if n := len(out.Hostnames); n != MaxHostnameStatus {
		t.Fatalf("status.hostnames has %d entries, want %d", n, MaxHostnameStatus)
	}
	last := out.Hostnames[len(out.Hostnames)-1]
	if last.Hostname != "zzz.example.net" || last.State != v1alpha1.HostnameOutsideApex {
		t.Errorf("the claim that is not served must be kept, sorted last: got %+v", last)
	}
	want := "hostnames that can never be served (see status.hostnames): zzz.example.net (OutsideApex) (status.hostnames lists 1000 of 1501 claims, those not served first)"
	if got := condition(out, ConditionRoutesAccepted).Message; got != want {
		t.Errorf("RoutesAccepted message:\nwant %s\ngot  %s", want, got)
	}
}
