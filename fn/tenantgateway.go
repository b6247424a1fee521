package fn

import (
	"errors"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// decodeTenantGateway reads the observed XR into its Go type.
func decodeTenantGateway(xr *resource.Composite) (*v1alpha1.TenantGateway, error) {
	tgw := &v1alpha1.TenantGateway{}
	return tgw, decodeJSON(xr.Resource.Object, tgw)
}

func init() { //nolint:gochecknoinits // composed.From needs the kinds we compose in its scheme.
	for _, add := range []func(*runtime.Scheme) error{gwapiv1.Install, cmv1.AddToScheme} {
		if err := add(composed.Scheme); err != nil {
			panic(fmt.Sprintf("cannot register composed kinds: %v", err))
		}
	}
}

// runTenantGateway composes one TenantGateway.
func runTenantGateway(log logging.Logger, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, xr *resource.Composite, settings fnv1beta1.Input) {
	tgw, err := decodeTenantGateway(xr)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot decode TenantGateway %s/%s (is every spec field of the type the XRD declares?): %w", xr.Resource.GetNamespace(), xr.Resource.GetName(), err))
		return
	}

	out, err := gateway.Compose(gateway.Input{
		Name:                 tgw.GetName(),
		Namespace:            tgw.GetNamespace(),
		Spec:                 tgw.Spec,
		CertManagerNamespace: settings.CertManagerNamespace,
	})
	if err != nil {
		// A Fatal result stops the pipeline before Crossplane applies
		// anything, so the last good desired state stays in place.
		var invalid *gateway.InvalidSpecError
		if errors.As(err, &invalid) {
			response.Fatal(rsp, err)
			return
		}
		response.Fatal(rsp, fmt.Errorf("cannot compose TenantGateway %s/%s: %w", tgw.GetNamespace(), tgw.GetName(), err))
		return
	}

	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot get desired composed resources: %w", err))
		return
	}
	for _, r := range out.Resources {
		cd, err := toComposed(r)
		if err != nil {
			response.Fatal(rsp, err)
			return
		}
		desired[resource.Name(r.Key)] = &resource.DesiredComposed{Resource: cd}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot set desired composed resources: %w", err))
		return
	}

	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot get the desired composite resource: %w", err))
		return
	}
	if err := dxr.Resource.SetString("status.certMode", string(out.CertMode)); err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot set status.certMode: %w", err))
		return
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot set the desired composite resource: %w", err))
		return
	}
	log.Debug("composed TenantGateway", "cert-mode", out.CertMode, "resources", len(out.Resources))
}
