package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestListenerStatusAndGatewayReady(t *testing.T) {
	type want struct {
		Reasons      []string
		GatewayReady Condition
		Ready        bool
	}
	// specOf is the spec listeners of an observed Gateway whose status
	// reports listeners: a controller reports only what the spec has.
	specOf := func(listeners map[string]map[string]string) map[string]string {
		spec := map[string]string{}
		for name := range listeners {
			spec[name] = ""
		}
		return spec
	}
	gw := func(conds map[string]string, listeners map[string]map[string]string) map[string]*kube.ObservedResource {
		return map[string]*kube.ObservedResource{KeyGateway: {Conditions: conds, Listeners: listeners, ListenerHostnames: specOf(listeners)}}
	}
	cilium := &Class{Name: "cilium", ControllerName: CiliumControllerName}
	envoy := &Class{Name: "envoy", ControllerName: "gateway.envoyproxy.io/gatewayclass-controller"}
	cases := map[string]struct {
		reason   string
		class    *Class
		noClass  bool
		observed map[string]*kube.ObservedResource
		// reported are the listeners the last run's status.listeners named.
		reported map[string]string
		want     want
	}{
		"ClassNotFound": {
			reason:  "The GatewayClass does not exist: GatewayClassNotFound at once, before the Gateway sits unaccepted",
			noClass: true,
			want: want{
				Reasons:      []string{"http:false:Pending", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonGatewayClassNotFound, Message: "GatewayClass cilium does not exist, so no controller will accept Gateway tenant-root/cozystack; set spec.gatewayClassName to a class of the cluster (kubectl get gatewayclass)"},
			},
		},
		"NotObserved": {
			reason: "A Gateway not observed yet: every listener Pending, GatewayNotAccepted",
			class:  cilium,
			want: want{
				Reasons:      []string{"http:false:Pending", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonGatewayNotAccepted, Message: "Underlying Gateway tenant-root/cozystack has not been accepted by its controller yet"},
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
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonGatewayNotProgrammed, Message: "Underlying Gateway tenant-root/cozystack has not been programmed by its controller yet"},
			},
		},
		"NotProgrammedWithTheControllersWords": {
			reason: "GatewayNotProgrammed carries the Gateway's own reason and message (a LoadBalancer pending)",
			class:  cilium,
			observed: map[string]*kube.ObservedResource{KeyGateway: {
				Conditions: map[string]string{"Accepted": "True", "Programmed": "False"},
				Reasons:    map[string]string{"Accepted": "Accepted", "Programmed": "AddressNotAssigned"},
				Messages:   map[string]string{"Programmed": "No addresses have been assigned to the Gateway"},
			}},
			want: want{
				Reasons:      []string{"http:false:Pending", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonGatewayNotProgrammed, Message: "Underlying Gateway tenant-root/cozystack has not been programmed by its controller yet: AddressNotAssigned: No addresses have been assigned to the Gateway"},
			},
		},
		"CertificateNotReady": {
			reason: "A listener whose Certificate is not Ready says so with cert-manager's reason and message, in status.listeners and in ListenersNotReady",
			class:  envoy,
			observed: map[string]*kube.ObservedResource{
				KeyGateway: {Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}), Listeners: map[string]map[string]string{
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
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (CertificateNotReady: DoesNotExist: Issuing certificate as Secret does not exist) (see status.listeners)"},
			},
		},
		"CertificateNothingSaid": {
			reason: "A Certificate cert-manager has said nothing about yet leaves the listener to the Gateway's conditions",
			class:  envoy,
			observed: map[string]*kube.ObservedResource{
				KeyGateway: {Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}), Listeners: map[string]map[string]string{"http": accepted, wwwListener: {"Accepted": "True", "Programmed": "False"}}},
				wwwCert:    {Conditions: map[string]string{}},
			},
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:NotProgrammed"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (NotProgrammed) (see status.listeners)"},
			},
		},
		"CertificateReady": {
			reason: "A Ready Certificate leaves the listener to the Gateway's conditions",
			class:  envoy,
			observed: map[string]*kube.ObservedResource{
				KeyGateway: {Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}), Listeners: map[string]map[string]string{"http": accepted, wwwListener: accepted}},
				wwwCert:    {Conditions: map[string]string{"Ready": "True"}},
			},
			want: want{
				Reasons:      []string{"http:true:Ready", wwwListener + ":true:Ready"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Status: true, Reason: conditions.ReasonReconciled, Message: "Gateway tenant-root/cozystack is programmed and every listener is ready"},
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
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
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
				GatewayReady: Condition{Type: conditions.GatewayReady, Status: true, Reason: conditions.ReasonReconciled, Message: "Gateway tenant-root/cozystack is programmed and every listener is ready"},
				Ready:        true,
			},
		},
		"ListenerNotAppliedYet": {
			reason:   "A listener this run adds, not in the observed Gateway yet, is Pending in status.listeners but not judged: the Gateway as observed is ready, so GatewayReady and the Gateway's readiness do not flip for the moment before the apply",
			class:    envoy,
			observed: gw(accepted, map[string]map[string]string{"http": accepted}),
			want: want{
				Reasons:      []string{"http:true:Ready", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Status: true, Reason: conditions.ReasonReconciled, Message: "Gateway tenant-root/cozystack is programmed and every listener is ready"},
				Ready:        true,
			},
		},
		"ListenerReportedNotApplied": {
			reason:   "A listener the last run already reported that the observed Gateway still lacks is an apply that did not land: judged Pending, so GatewayReady is False and the Gateway not ready",
			class:    envoy,
			observed: gw(accepted, map[string]map[string]string{"http": accepted}),
			reported: map[string]string{"http": "", wwwListener: "www.example.org"},
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (Pending) (see status.listeners)"},
			},
		},
		"ListenerAppliedNotReported": {
			reason:   "A listener in the observed Gateway's spec that its controller has not reported on yet is judged: Pending makes GatewayReady False (a controller that never reports is seen)",
			class:    envoy,
			observed: map[string]*kube.ObservedResource{KeyGateway: {Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}), Listeners: map[string]map[string]string{"http": accepted}}},
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:Pending"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (Pending) (see status.listeners)"},
			},
		},
		"StatusOfAnOlderGeneration": {
			reason: "The Gateway's controller reported Accepted and Programmed on generation 3 and every listener ready, but the Gateway is at 4 (the controller is down while routes change): not judged on it, GatewayStatusStale, the listeners Pending and the Gateway not ready",
			class:  envoy,
			observed: map[string]*kube.ObservedResource{KeyGateway: {
				Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}),
				Listeners:  map[string]map[string]string{"http": accepted, wwwListener: accepted},
				Generation: 4, StatusGenerations: map[string]int64{"Accepted": 3, "Programmed": 3},
				ListenerGenerations: map[string]int64{"http": 3, wwwListener: 3},
			}},
			want: want{
				Reasons: []string{
					"http:false:Pending:its controller reported on generation 3 of the Gateway, which is at 4",
					wwwListener + ":false:Pending:its controller reported on generation 3 of the Gateway, which is at 4",
				},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonGatewayStatusStale,
					Message: "Underlying Gateway tenant-root/cozystack is at generation 4; its controller's status describes generation 3, so the Gateway is not judged until the controller has seen it"},
			},
		},
		"ListenerStatusOfAnOlderGeneration": {
			reason: "One listener's conditions are of an older generation than the Gateway's (the others current): that listener alone is Pending",
			class:  envoy,
			observed: map[string]*kube.ObservedResource{KeyGateway: {
				Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}),
				Listeners:  map[string]map[string]string{"http": accepted, wwwListener: accepted},
				Generation: 4, StatusGenerations: map[string]int64{"Accepted": 4, "Programmed": 4},
				ListenerGenerations: map[string]int64{"http": 4, wwwListener: 2},
			}},
			want: want{
				Reasons: []string{"http:true:Ready", wwwListener + ":false:Pending:its controller reported on generation 2 of the Gateway, which is at 4"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (Pending: its controller reported on generation 2 of the Gateway, which is at 4) (see status.listeners)"},
			},
		},
		"StatusOfTheCurrentGeneration": {
			reason: "Conditions of the Gateway's own generation, or without an observedGeneration, are judged as they are",
			class:  envoy,
			observed: map[string]*kube.ObservedResource{KeyGateway: {
				Conditions: accepted, ListenerHostnames: specOf(map[string]map[string]string{"http": nil, wwwListener: nil}),
				Listeners:  map[string]map[string]string{"http": accepted, wwwListener: accepted},
				Generation: 4, StatusGenerations: map[string]int64{"Accepted": 4},
				ListenerGenerations: map[string]int64{"http": 5},
			}},
			want: want{
				Reasons:      []string{"http:true:Ready", wwwListener + ":true:Ready"},
				GatewayReady: Condition{Type: conditions.GatewayReady, Status: true, Reason: conditions.ReasonReconciled, Message: "Gateway tenant-root/cozystack is programmed and every listener is ready"},
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
				GatewayReady: Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonListenersNotReady,
					Message: "Gateway tenant-root/cozystack has 1 of 2 listeners not ready: " + wwwListener + " (RefsNotResolved) (see status.listeners)"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, compose := Input{Observed: tc.observed, GatewayClass: tc.class, Previous: PreviousStatus{Listeners: tc.reported}}, run
			if tc.noClass {
				compose = runNoClass
			}
			out := compose(t, in)
			got := want{GatewayReady: condition(out, conditions.GatewayReady), Ready: out.Ready[KeyGateway]}
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
		Observed: map[string]*kube.ObservedResource{
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
