package gateway

import (
	"testing"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/conditions"
)

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
	if got := condition(out, conditions.RoutesAccepted).Message; got != want {
		t.Errorf("RoutesAccepted message:\nwant %s\ngot  %s", want, got)
	}
}
