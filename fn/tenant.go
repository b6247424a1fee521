package fn

import (
	"errors"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/tenant"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// reqParentNamespace is the requirement of a Tenant run besides the platform
// settings: the namespace of the claim, its parent tenant's.
const reqParentNamespace = "parent-namespace"

// reqGatewayClasses lists every GatewayClass, for the publishing tenant's
// check of the classes the platform settings name (tenant.ChecksClasses).
// A list rather than one lookup per class: the names are the operator's
// free text, and the lookup of an entry that is no valid name (empty, or
// holding '/') fails in the client, and with it the whole pipeline.
const reqGatewayClasses = "gatewayclasses"

// kindGatewayClass is the kind of Gateway API's GatewayClass.
const kindGatewayClass = "GatewayClass"

// reqClusterIssuers lists every ClusterIssuer, for the publishing tenant's
// check that their HTTP-01 solvers agree with gateway.className
// (tenant.ChecksClusterIssuers).
const reqClusterIssuers = "clusterissuers"

// reqPublishingNamespace is the publishing tenant's namespace, whose host
// label a nested tenant's own apex is judged against besides
// publishing.host (tenant.NeedsPublishingNamespace).
const reqPublishingNamespace = "publishing-namespace"

// Labels Crossplane puts on the XR of a claim.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

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

	platform, ok := requireTenant(log, req, rsp, settings, name, parent, x.Spec)
	if !ok {
		return
	}
	parentLabels := requiredLabels(req, reqParentNamespace)

	out, err := tenant.Derive(tenant.Input{
		Name: name, Parent: parent, Spec: x.Spec, ParentLabels: parentLabels, Platform: platform,
		WildcardSecret: observedReplica(req), Observed: observeComposed(req), GatewayConditions: observedGatewayConditions(req),
		GatewayClasses: observedClassNames(req), ClusterIssuers: observedClusterIssuers(log, req),
		PublishingLabels: requiredLabels(req, reqPublishingNamespace), Conditions: conditionList(structView(req.GetObserved().GetComposite().GetResource()).at("status", "conditions")),
	})
	if c, ok := tenant.Acceptance(name, parent, err); ok {
		setTenantCondition(rsp, c)
	}
	if err != nil {
		var refused *tenant.RefusedError
		if errors.As(err, &refused) {
			// The tenant reads its claim, not the XTenant: the warning
			// goes to both, before the Fatal result that stops the
			// pipeline (Crossplane still records earlier results and the
			// conditions of a response that ends fatally).
			// The Fatal result names the claim before the bounded refusal,
			// and is bounded again (see Bounds in docs/design.md).
			response.Warning(rsp, err).TargetCompositeAndClaim()
			response.Fatal(rsp, errors.New(text.Truncate(fmt.Sprintf("Tenant %s/%s: %v", parent, name, err))))
			return
		}
		response.Fatal(rsp, fmt.Errorf("cannot derive Tenant %s/%s: %w", parent, name, err))
		return
	}
	if err := setTenantDesired(req, rsp, out); err != nil {
		response.Fatal(rsp, err)
		return
	}
	log.Debug("derived Tenant", "namespace", out.Status.Namespace, "apex", out.Status.Apex, "gateway-namespace", out.Status.GatewayNamespace)
}

// requireTenant asks Crossplane for what a Tenant run reads: the platform
// settings and the parent namespace, then, for the publishing tenant, the
// GatewayClasses (tenant.ChecksClasses) and the ClusterIssuers
// (tenant.ChecksClusterIssuers), and for a nested tenant given an apex of
// its own the publishing namespace (tenant.NeedsPublishingNamespace), and
// reads the settings; false while a requirement is unanswered or after a
// Fatal result.
func requireTenant(log logging.Logger, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, settings fnv1beta1.Input, name, parent string, spec appsv1alpha1.TenantSpec) (tenant.Platform, bool) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{
		reqPlatform:        platformSelector(settings),
		reqParentNamespace: byName("v1", "Namespace", parent),
	}
	if !resolved(req, rsp) {
		log.Debug("waiting for the platform settings")
		return tenant.Platform{}, false
	}
	platform, ok := platformSettings(req, rsp, settings)
	if !ok {
		return platform, false
	}
	owning := spec.Gateway != nil && *spec.Gateway
	more := false
	if tenant.ChecksClasses(name, parent, platform) {
		rsp.Requirements.Resources[reqGatewayClasses] = all(gwapiv1.GroupVersion.String(), kindGatewayClass, nil)
		more = true
	}
	if tenant.ChecksClusterIssuers(name, parent, owning, platform) {
		rsp.Requirements.Resources[reqClusterIssuers] = all(cmv1.SchemeGroupVersion.String(), cmv1.ClusterIssuerKind, nil)
		more = true
	}
	if tenant.NeedsPublishingNamespace(name, parent, spec.Host, owning, requiredLabels(req, reqParentNamespace), platform) {
		rsp.Requirements.Resources[reqPublishingNamespace] = byName("v1", "Namespace", platform.IngressName)
		more = true
	}
	if more && !resolved(req, rsp) {
		log.Debug("waiting for the GatewayClasses, ClusterIssuers or publishing namespace")
		return platform, false
	}
	return platform, true
}

// requiredLabels are the labels of the object a run required under key
// (nil when it does not exist or was not required).
func requiredLabels(req *fnv1.RunFunctionRequest, key string) map[string]string {
	if items := req.GetRequiredResources()[key].GetItems(); len(items) > 0 {
		return stringMap(valueView(field(items[0].GetResource(), "metadata", "labels")))
	}
	return nil
}

// platformSettings reads the platform EnvironmentConfig, or the defaults
// with a warning when it does not exist; false after a Fatal result.
func platformSettings(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, settings fnv1beta1.Input) (tenant.Platform, bool) {
	data, found := platformData(req)
	if !found {
		response.Warning(rsp, fmt.Errorf("EnvironmentConfig %s not found: deriving the tenant from the default platform settings", settings.PlatformConfigName)).TargetCompositeAndClaim()
	}
	platform, err := tenant.ParsePlatform(data)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the platform settings in EnvironmentConfig %s: %w", settings.PlatformConfigName, err))
		return platform, false
	}
	return platform, true
}

// setTenantDesired composes the tenant's resources, each ready as the
// derivation says, and writes its status and conditions; its warnings and
// conditions target the XTenant and the claim.
func setTenantDesired(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, out *tenant.Output) error {
	if err := setComposed(req, rsp, out.Resources, out.Ready); err != nil {
		return err
	}
	for _, w := range out.Warnings {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	if err := writeStatus(req, rsp, &out.Status, false); err != nil {
		return err
	}
	for _, c := range out.Conditions {
		setTenantCondition(rsp, c)
	}
	return nil
}

// observedClassNames are the names of the GatewayClasses the run listed;
// nil when it listed none.
func observedClassNames(req *fnv1.RunFunctionRequest) []string {
	var out []string
	for _, it := range req.GetRequiredResources()[reqGatewayClasses].GetItems() {
		if n := str(it.GetResource(), keyMetadata, "name"); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// observedClusterIssuers are the ClusterIssuers the run listed, each
// decoded with cert-manager's types; one that does not decode is left out
// and logged (its solvers judge nothing the function composes).
func observedClusterIssuers(log logging.Logger, req *fnv1.RunFunctionRequest) []cmv1.ClusterIssuer {
	var out []cmv1.ClusterIssuer
	for _, it := range req.GetRequiredResources()[reqClusterIssuers].GetItems() {
		var ci cmv1.ClusterIssuer
		if err := jsonobj.Decode(it.GetResource().AsMap(), &ci); err != nil {
			log.Info("cannot decode a ClusterIssuer; its solvers are not compared with gateway.className", "cluster-issuer", str(it.GetResource(), keyMetadata, "name"), "error", err)
			continue
		}
		out = append(out, ci)
	}
	return out
}

// setTenantCondition writes a Tenant condition for the XTenant and its claim.
func setTenantCondition(rsp *fnv1.RunFunctionResponse, c tenant.Condition) {
	setCondition(rsp, string(c.Type), string(c.Reason), c.Status, c.Message).TargetCompositeAndClaim()
}
