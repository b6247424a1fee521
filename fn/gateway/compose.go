package gateway

import (
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
)

// Input is everything one run knows about one TenantGateway.
type Input struct {
	// Name and Namespace of the TenantGateway.
	Name      string
	Namespace string
	// Spec of the TenantGateway, as observed (defaults are applied here).
	Spec v1alpha1.TenantGatewaySpec
	// CertManagerNamespace is admitted on the port-80 listener for ACME
	// HTTP-01 challenge routes.
	CertManagerNamespace string

	// Routes are every HTTPRoute and TLSRoute of the cluster; those that do
	// not attach to this Gateway from an admitted namespace are ignored.
	Routes []Route
	// Namespaces are the namespaces labelled as publishing through this
	// Gateway.
	Namespaces []Namespace
	// ObservedListeners are the listener names of the Gateway as last
	// composed; they keep their place when the listener budget is short.
	ObservedListeners map[string]bool
}

// Object is a typed Kubernetes object the function composes.
type Object interface {
	runtime.Object
	metav1.Object
}

// Resource is one composed object under its stable composition resource name.
type Resource struct {
	Key    string
	Object Object
}

// Output is what one TenantGateway composes and reports.
type Output struct {
	// CertMode is the mode in force.
	CertMode v1alpha1.CertMode
	// Resources in a fixed order; keys are unique.
	Resources []Resource

	// Hostnames, Conflicts and ChildApexes are the status of SPEC §2.1.
	Hostnames   []v1alpha1.HostnameStatus
	Conflicts   []v1alpha1.ConflictStatus
	ChildApexes []v1alpha1.ChildApexStatus
	// Listeners is the number of listeners on the Gateway.
	Listeners int
	// LeftOut counts the hostnames and child apexes the 64-listener budget
	// left out.
	LeftOut int
}

// An InvalidSpecError lists everything wrong with a TenantGateway's spec.
type InvalidSpecError struct {
	Errors field.ErrorList
}

func (e *InvalidSpecError) Error() string {
	return fmt.Sprintf("invalid TenantGateway spec: %s", e.Errors.ToAggregate().Error())
}

// Compose validates the TenantGateway and computes its composed resources
// and status from the routes and namespaces it observes.
func Compose(in Input) (*Output, error) {
	in.Spec = Defaulted(in.Spec)
	if errs := Validate(in.Spec); len(errs) > 0 {
		return nil, &InvalidSpecError{Errors: errs}
	}
	mode := in.Spec.CertMode
	// The output must not depend on the order the cluster listed things in.
	in.Namespaces = slices.Clone(in.Namespaces)
	sort.Slice(in.Namespaces, func(i, j int) bool { return in.Namespaces[i].Name < in.Namespaces[j].Name })

	children := discoverChildren(&in)
	claims := collectClaims(&in)
	judgeShape(&in, claims, children)
	contests := resolveConflicts(claims)

	var p *plan
	if mode == v1alpha1.CertModeHTTP01 {
		p = planHTTP01(&in, claims, contests)
	} else {
		p = planWildcard(&in, claims, contests, children)
	}

	out := &Output{
		CertMode:    mode,
		Hostnames:   hostnameStatus(claims),
		Conflicts:   conflictStatus(contests),
		ChildApexes: childApexStatus(children),
		Listeners:   len(p.listeners),
		LeftOut:     leftOut(claims, children),
	}
	out.Resources = append(out.Resources, Resource{Key: KeyGateway, Object: gatewayObject(&in, p.listeners)})
	switch mode {
	case v1alpha1.CertModeHTTP01:
		out.Resources = append(out.Resources, Resource{Key: KeyIssuer, Object: issuerObject(&in)})
		for _, h := range p.hostListeners {
			out.Resources = append(out.Resources, Resource{Key: CertificateKey(HostListenerName(h)), Object: hostCertificate(&in, h)})
		}
	case v1alpha1.CertModeDNS01:
		out.Resources = append(out.Resources,
			Resource{Key: KeyIssuer, Object: issuerObject(&in)},
			Resource{Key: KeyCertificateWildcard, Object: wildcardCertificate(&in, childNames(&in, children))},
		)
	case v1alpha1.CertModeExistingSecret, v1alpha1.CertModeEdge:
		// No Issuer and no Certificate: the operator's Secret, or TLS in
		// front of the Gateway.
	}
	if mode != v1alpha1.CertModeEdge {
		// The edge in front of an edge-mode Gateway performs the redirect.
		out.Resources = append(out.Resources, Resource{Key: KeyRedirect, Object: redirectObject(&in)})
	}
	return out, nil
}
