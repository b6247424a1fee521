package fn

import (
	"errors"
	"fmt"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/tenant"
)

// Requirements of a Tenant run.
const (
	reqPlatform        = "platform"
	reqParentNamespace = "parent-namespace"
)

// Labels Crossplane puts on the XR of a claim.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

// ConditionTenantGatewayReady mirrors the Ready condition of the tenant's
// TenantGateway on the Tenant.
const ConditionTenantGatewayReady = "TenantGatewayReady"

// runTenant composes one Tenant claim's XTenant.
func runTenant(log logging.Logger, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, xr *resource.Composite, settings fnv1beta1.Input) {
	name, parent := xr.Resource.GetLabels()[labelClaimName], xr.Resource.GetLabels()[labelClaimNamespace]
	if name == "" || parent == "" {
		response.Fatal(rsp, fmt.Errorf("XTenant %s was not created through a Tenant claim (labels %s and %s are missing): create a Tenant in the parent tenant's namespace", xr.Resource.GetName(), labelClaimName, labelClaimNamespace))
		return
	}
	x := &appsv1alpha1.XTenant{}
	if err := jsonobj.Decode(xr.Resource.Object, x); err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot decode Tenant %s/%s (is every spec field of the type the XRD declares?): %w", parent, name, err))
		return
	}

	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{
		reqPlatform:        platformSelector(settings),
		reqParentNamespace: byName("v1", "Namespace", parent),
	}
	if !resolved(req, rsp) {
		log.Debug("waiting for the platform settings")
		return
	}

	data, found := platformData(req)
	if !found {
		response.Warning(rsp, fmt.Errorf("EnvironmentConfig %s not found: deriving the tenant from the default platform settings", settings.PlatformConfigName)).TargetCompositeAndClaim()
	}
	platform, err := tenant.ParsePlatform(data)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the platform settings in EnvironmentConfig %s: %w", settings.PlatformConfigName, err))
		return
	}
	var parentLabels map[string]string
	if items := req.GetRequiredResources()[reqParentNamespace].GetItems(); len(items) > 0 {
		parentLabels = stringMap(field(items[0].GetResource(), "metadata", "labels"))
	}

	out, err := tenant.Derive(tenant.Input{Name: name, Parent: parent, Spec: x.Spec, ParentLabels: parentLabels, Platform: platform})
	if err != nil {
		var refused *tenant.RefusedError
		if errors.As(err, &refused) {
			response.Fatal(rsp, fmt.Errorf("Tenant %s/%s: %w", parent, name, err)) //nolint:staticcheck // The kind starts the sentence the operator reads.
			return
		}
		response.Fatal(rsp, fmt.Errorf("cannot derive Tenant %s/%s: %w", parent, name, err))
		return
	}
	if err := setTenantDesired(req, rsp, out); err != nil {
		response.Fatal(rsp, err)
		return
	}
	mirrorGatewayReady(req, rsp, out)
	log.Debug("derived Tenant", "namespace", out.Status.Namespace, "apex", out.Status.Apex, "gateway-namespace", out.Status.GatewayNamespace)
}

// platformSelector asks for the platform EnvironmentConfig by name.
func platformSelector(settings fnv1beta1.Input) *fnv1.ResourceSelector {
	return byName("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", settings.PlatformConfigName)
}

// platformData is the data of the required platform EnvironmentConfig;
// found is false when there is none.
func platformData(req *fnv1.RunFunctionRequest) (data map[string]any, found bool) {
	items := req.GetRequiredResources()[reqPlatform].GetItems()
	if len(items) == 0 {
		return map[string]any{}, false
	}
	data, _ = items[0].GetResource().AsMap()["data"].(map[string]any)
	return data, true
}

// setTenantDesired composes the tenant's resources and writes its status.
func setTenantDesired(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, out *tenant.Output) error {
	observed := observeComposed(req)
	if err := setComposed(req, rsp, out.Resources, func(key string) bool { return tenantReady(key, observed[key]) }); err != nil {
		return err
	}
	return writeStatus(req, rsp, &out.Status)
}

// tenantReady reports whether a Tenant's composed resource is ready: a
// Namespace composed directly once it exists (namespaces have no
// conditions), a provider-kubernetes Object once it is Ready and Synced.
func tenantReady(key string, o *gateway.ObservedResource) bool {
	switch {
	case o == nil:
		return false
	case key == tenant.KeyNamespace && len(o.Conditions) == 0:
		return true
	default:
		return o.Conditions["Ready"] == "True" && o.Conditions["Synced"] == "True"
	}
}

// mirrorGatewayReady copies the Ready condition of the tenant's TenantGateway,
// as provider-kubernetes observed it, onto the Tenant.
func mirrorGatewayReady(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, out *tenant.Output) {
	owning := false
	for _, r := range out.Resources {
		owning = owning || r.Key == tenant.KeyGateway
	}
	if !owning {
		return
	}
	obj := req.GetObserved().GetResources()[tenant.KeyGateway].GetResource()
	for _, c := range field(obj, "status", "atProvider", "manifest", "status", "conditions").GetListValue().GetValues() {
		cs := c.GetStructValue()
		if str(cs, "type") != "Ready" {
			continue
		}
		set := response.ConditionFalse
		if str(cs, "status") == "True" {
			set = response.ConditionTrue
		}
		set(rsp, ConditionTenantGatewayReady, str(cs, "reason")).WithMessage(str(cs, "message")).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, ConditionTenantGatewayReady, "Creating").
		WithMessage(fmt.Sprintf("TenantGateway %s/%s has not reported readiness yet", out.Status.Namespace, tenant.TenantGateway)).TargetCompositeAndClaim()
}
