package fn

import (
	"errors"
	"fmt"
	"maps"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kclusterv1alpha2 "github.com/crossplane-contrib/provider-kubernetes/apis/cluster/object/v1alpha2"
	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/tenant"
)

func init() { //nolint:gochecknoinits // composed.From needs the kinds we compose in its scheme.
	for _, add := range []func(*runtime.Scheme) error{
		gwapiv1.Install, cmv1.AddToScheme, corev1.AddToScheme,
		kobjv1alpha1.SchemeBuilder.AddToScheme, kclusterv1alpha2.SchemeBuilder.AddToScheme,
	} {
		if err := add(composed.Scheme); err != nil {
			panic(fmt.Sprintf("cannot register composed kinds: %v", err))
		}
	}
}

// decodeTenantGateway reads the observed XR's metadata and spec into its Go
// type. The status is the function's own memory, read apart (see
// observePrevious), so that a status someone edited cannot stop every run.
func decodeTenantGateway(xr *resource.Composite) (*v1alpha1.TenantGateway, error) {
	tgw := &v1alpha1.TenantGateway{}
	obj := make(map[string]any, len(xr.Resource.Object))
	for k, v := range xr.Resource.Object {
		if k != "status" {
			obj[k] = v
		}
	}
	return tgw, jsonobj.Decode(obj, tgw)
}

// runTenantGateway composes one TenantGateway, and keeps in composed what
// it answered for the metrics.
func runTenantGateway(log logging.Logger, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, xr *resource.Composite, settings fnv1beta1.Input, maxScoped int, composed *gatewayRun) {
	tgw, err := decodeTenantGateway(xr)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot decode TenantGateway %s/%s (is every spec field of the type the XRD declares?): %w", xr.Resource.GetNamespace(), xr.Resource.GetName(), err))
		return
	}

	named := gateway.NamedNamespaces(tgw.GetNamespace(), tgw.Spec.AttachedNamespaces, maps.Keys(req.GetObserved().GetResources()))
	requireResources(req, rsp, tgw, named, settings, maxScoped)
	if !resolved(req, rsp) {
		// Compose only from complete observations: Crossplane calls again
		// with the required resources, and uses only the last answer.
		log.Debug("waiting for required resources")
		return
	}
	// The platform settings win over the input, which is their default
	// (Platform settings in docs/design.md). A cluster without them is
	// normal for TenantGateways written by hand: no warning.
	data, _ := platformData(req)
	certManagerNamespace, err := tenant.CertManagerNamespace(data, settings.CertManagerNamespace)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the platform settings in EnvironmentConfig %s: %w", settings.PlatformConfigName, err))
		return
	}

	in := gateway.Input{
		Name:                 tgw.GetName(),
		Namespace:            tgw.GetNamespace(),
		UID:                  string(tgw.GetUID()),
		Spec:                 tgw.Spec,
		CertManagerNamespace: certManagerNamespace,
		Observed:             observeComposed(req),
		Probes:               observeProbes(req),
		GatewayClass:         observeGatewayClass(req),
		NamedNamespaces:      observeNamedNamespaces(req, named),
	}
	var warnings, skipped []string
	in.Previous, warnings = observePrevious(req)
	in.Routes, in.Namespaces, skipped = observe(req)
	if len(skipped) > 0 {
		// One warning for all of them: every warning becomes an event.
		warnings = append(warnings, gateway.BoundedList(fmt.Sprintf("skipping %d malformed routes and namespaces: ", len(skipped)), skipped, "; ", ""))
	}

	out, err := gateway.Compose(in)
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
	requireProbes(rsp, out.Probes)
	if !resolved(req, rsp) {
		log.Debug("waiting for the ownership probes")
		return
	}

	for _, w := range append(warnings, out.Warnings...) {
		response.Warning(rsp, errors.New(w)).TargetComposite()
	}
	for _, c := range out.Conditions {
		set := response.ConditionFalse
		if c.Status {
			set = response.ConditionTrue
		}
		set(rsp, string(c.Type), string(c.Reason)).WithMessage(c.Message).TargetComposite()
	}
	if err := setDesired(req, rsp, out, tgw.GetGeneration()); err != nil {
		response.Fatal(rsp, err)
		return
	}
	composed.composed(tgw.GetNamespace(), tgw.GetName(), out)
	log.Debug("composed TenantGateway", "cert-mode", out.CertMode, "resources", len(out.Resources), "routes", len(in.Routes), "hostnames", len(out.Hostnames), "listeners", out.Listeners, "left-out", out.LeftOut.Total())
}

// setDesired overlays the composed resources on the desired state of earlier
// pipeline steps and writes the status the function owns, computed from the
// XR's generation gen.
func setDesired(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, out *gateway.Output, gen int64) error {
	if err := setComposed(req, rsp, out.Resources, func(key string) bool { return out.Ready[key] }); err != nil {
		return err
	}
	status := &v1alpha1.TenantGatewayStatus{
		ObservedGeneration: gen,
		CertMode:           out.CertMode,
		Listeners:          out.ListenerStatus,
		Hostnames:          out.Hostnames,
		Conflicts:          out.Conflicts,
		ConflictCount:      out.ConflictCount,
		HostnamelessRoutes: out.HostnamelessRoutes,
		ChildApexes:        out.ChildApexes,
		ChildApexCount:     out.ChildApexCount,
	}
	if out.Digests != (v1alpha1.StatusDigests{}) {
		status.Digests = &out.Digests
	}
	return writeStatus(req, rsp, status, out.Unready)
}

// setComposed overlays the composed resources on the desired state of
// earlier pipeline steps, each marked ready or not.
func setComposed(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, resources []gateway.Resource, ready func(key string) bool) error {
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return fmt.Errorf("cannot get desired composed resources: %w", err)
	}
	for _, r := range resources {
		cd, err := toComposed(r)
		if err != nil {
			return err
		}
		state := resource.ReadyFalse
		if ready(r.Key) {
			state = resource.ReadyTrue
		}
		desired[resource.Name(r.Key)] = &resource.DesiredComposed{Resource: cd, Ready: state}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		return fmt.Errorf("cannot set desired composed resources: %w", err)
	}
	return nil
}

// writeStatus merges the fields of a typed status into the desired XR's
// status. The fields are plain JSON values after one round trip, so they go
// straight into the object rather than through SetValue's own round trip per
// field; empty lists are left out. unready marks the XR not ready whatever
// its composed resources say (Crossplane then reports Ready=False, Creating).
func writeStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, status any, unready bool) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot get the desired composite resource: %w", err)
	}
	fields, err := statusFields(status)
	if err != nil {
		return err
	}
	st, _ := dxr.Resource.Object["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		dxr.Resource.Object["status"] = st
	}
	for k, v := range fields {
		st[k] = v
	}
	if unready {
		dxr.Ready = resource.ReadyFalse
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return fmt.Errorf("cannot set the desired composite resource: %w", err)
	}
	return nil
}

// statusFields turns a typed status into the JSON fields Crossplane merges
// into the XR's status.
func statusFields(s any) (map[string]any, error) {
	// The unstructured converter walks the struct by reflection, honouring
	// omitempty, without encoding it to JSON bytes and back.
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode status: %w", err)
	}
	return m, nil
}
