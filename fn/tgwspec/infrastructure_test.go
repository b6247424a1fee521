package tgwspec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

func TestValidatePinnedAddress(t *testing.T) {
	many := map[string]string{}
	for i := range 9 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	cases := map[string]struct {
		infra     *v1alpha1.GatewayInfrastructure
		addresses []v1alpha1.GatewayAddress
		want      []string
	}{
		"Good": {
			infra:     &v1alpha1.GatewayInfrastructure{Annotations: map[string]string{"lbipam.cilium.io/ips": "198.51.100.10,2001:db8::10"}, Labels: map[string]string{"io.cilium/pool": "acme"}},
			addresses: []v1alpha1.GatewayAddress{{Value: "2001:db8::10"}, {Type: v1alpha1.AddressNamedAddress, Value: "acme-pool"}},
		},
		"TooManyLabels": {
			infra: &v1alpha1.GatewayInfrastructure{Labels: many, Annotations: many},
			want: []string{
				"spec.infrastructure.labels: Too many: 9: must have at most 8 items",
				"spec.infrastructure.annotations: Too many: 9: must have at most 8 items",
			},
		},
		"BadLabel": {
			infra: &v1alpha1.GatewayInfrastructure{Labels: map[string]string{"bad key!": "v", "pool": "not a value"}, Annotations: map[string]string{"/x": "v"}},
			want: []string{
				`spec.infrastructure.labels: Invalid value: "bad key!": label key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`spec.infrastructure.labels[pool]: Invalid value: "not a value": label value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
				`spec.infrastructure.annotations: Invalid value: "/x": annotation key: prefix part must be non-empty`,
			},
		},
		"BadAddresses": {
			addresses: []v1alpha1.GatewayAddress{
				{Value: "198.51.100.300"}, {Type: v1alpha1.AddressHostname, Value: "LB.example.org"}, {Type: "Pool", Value: "x"},
				{Value: ""}, {Value: "198.51.100.10"}, {Type: v1alpha1.AddressIPAddress, Value: "198.51.100.10"},
			},
			want: []string{
				`spec.addresses[0].value: Invalid value: "198.51.100.300": type IPAddress needs an IPv4 or IPv6 address, such as 198.51.100.10`,
				`spec.addresses[1].value: Invalid value: "LB.example.org": must be a lowercase DNS name (labels of a-z, 0-9 and '-', separated by dots)`,
				`spec.addresses[2].type: Unsupported value: "Pool": supported values: "IPAddress", "Hostname", "NamedAddress"`,
				`spec.addresses[3].value: Required value: the IPAddress the Gateway asks for`,
				`spec.addresses[5]: Duplicate value: "198.51.100.10"`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := Defaulted(v1alpha1.TenantGatewaySpec{Apex: "example.org", CertMode: v1alpha1.CertModeEdge, Infrastructure: tc.infra, Addresses: tc.addresses})
			var got []string
			for _, e := range Validate(spec) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want, +got:\n%s", strings.ReplaceAll(diff, "\\", ""))
			}
		})
	}
}
