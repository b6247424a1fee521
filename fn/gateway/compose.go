package gateway

import (
	"fmt"

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

// Output is what one TenantGateway composes.
type Output struct {
	// CertMode is the mode in force.
	CertMode v1alpha1.CertMode
	// Resources in a fixed order; keys are unique.
	Resources []Resource
}

// An InvalidSpecError lists everything wrong with a TenantGateway's spec.
type InvalidSpecError struct {
	Errors field.ErrorList
}

func (e *InvalidSpecError) Error() string {
	return fmt.Sprintf("invalid TenantGateway spec: %s", e.Errors.ToAggregate().Error())
}

// supportedModes are the certificate modes this version composes. The
// listener, certificate and child-apex logic of the other modes is not built
// yet; they are refused with a clear message rather than half-composed.
var supportedModes = []v1alpha1.CertMode{v1alpha1.CertModeHTTP01}

// Compose validates the TenantGateway and computes its composed resources.
func Compose(in Input) (*Output, error) {
	in.Spec = Defaulted(in.Spec)
	if errs := Validate(in.Spec); len(errs) > 0 {
		return nil, &InvalidSpecError{Errors: errs}
	}
	if !oneOf(in.Spec.CertMode, supportedModes) {
		return nil, &InvalidSpecError{Errors: field.ErrorList{
			field.NotSupported(field.NewPath("spec", "certMode"), in.Spec.CertMode, supportedModes),
		}}
	}
	out := &Output{CertMode: in.Spec.CertMode}
	out.Resources = append(out.Resources,
		Resource{Key: KeyGateway, Object: gatewayObject(&in)},
		Resource{Key: KeyIssuer, Object: issuerObject(&in)},
		Resource{Key: KeyRedirect, Object: redirectObject(&in)},
	)
	return out, nil
}
