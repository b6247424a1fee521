package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

func TestEdgeConditionsGuardAndReadiness(t *testing.T) {
	type want struct {
		Conditions []string
		Desired    map[string]string
	}
	const foreignGateway = `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"cozystack","namespace":"tenant-root"}}`
	const readyIssuer = `{"apiVersion":"cert-manager.io/v1","kind":"Issuer","metadata":{"name":"cozystack-gateway","namespace":"tenant-root"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	cases := map[string]struct {
		reason   string
		cluster  []string
		observed map[string]*fnv1.Resource
		want     want
	}{
		"ForeignGateway": {
			reason:  "A Gateway at our name that is not ours is not composed, and GatewayReady says why",
			cluster: []string{foreignGateway},
			want: want{
				Conditions: []string{
					"GatewayReady False ReconcileError: Gateway tenant-root/cozystack exists but is not owned by TenantGateway cozystack; refusing to take over (delete it manually if you want the function to manage it)",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired: map[string]string{"issuer": "READY_FALSE", "redirect": "READY_FALSE"},
			},
		},
		"ObservedIssuerReady": {
			reason:   "An observed Issuer with Ready=True is marked ready; the rest are not observed yet",
			observed: map[string]*fnv1.Resource{"issuer": {Resource: resource.MustStructJSON(readyIssuer)}},
			want: want{
				Conditions: []string{
					"GatewayReady False GatewayNotAccepted: Underlying Gateway tenant-root/cozystack has not been accepted by its controller yet",
					"ListenersReady True ListenersFit: every hostname fits within the 64-listener limit",
					"RoutesAccepted True Accepted: every claimed hostname is served or reported in status.hostnames",
				},
				Desired: map[string]string{"gateway": "READY_FALSE", "issuer": "READY_TRUE", "redirect": "READY_FALSE"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := newRequest(t, `{"apex":"example.org"}`, nil, nil)
			req.Observed.Resources = tc.observed
			rsp, _ := fakeCluster{served: v1TLSRoutes, objects: tc.cluster}.run(t, NewFunction(), req)
			got := want{Desired: map[string]string{}}
			for _, c := range rsp.GetConditions() {
				got.Conditions = append(got.Conditions, c.GetType()+" "+map[fnv1.Status]string{fnv1.Status_STATUS_CONDITION_TRUE: "True", fnv1.Status_STATUS_CONDITION_FALSE: "False"}[c.GetStatus()]+" "+c.GetReason()+": "+c.GetMessage())
			}
			for k, r := range rsp.GetDesired().GetResources() {
				got.Desired[k] = r.GetReady().String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
