package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

func TestOwnershipGuard(t *testing.T) {
	cases := map[string]struct {
		reason  string
		probes  map[string]Probe
		obs     map[string]*kube.ObservedResource
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
			obs:    map[string]*kube.ObservedResource{KeyIssuer: {}},
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
			c := condition(out, conditions.GatewayReady)
			if tc.message == "" {
				if c.Reason == conditions.ReasonReconcileError {
					t.Errorf("%s\nunexpected ReconcileError: %s", tc.reason, c.Message)
				}
				return
			}
			if diff := cmp.Diff(Condition{Type: conditions.GatewayReady, Reason: conditions.ReasonReconcileError, Message: tc.message}, c); diff != "" {
				t.Errorf("%s\nGatewayReady: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("ProbesNeeded", func(t *testing.T) {
		in := Input{Name: "cozystack", Namespace: "tenant-root", Spec: v1alpha1.TenantGatewaySpec{Apex: "example.org"}, Observed: map[string]*kube.ObservedResource{KeyGateway: {}}}
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
