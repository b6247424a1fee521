package fn

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// Names of the resources and schemas a TenantGateway run requires.
const (
	reqHTTPRoutes      = "httproutes"
	reqTLSRoutes       = "tlsroutes"
	reqNamespaces      = "namespaces"
	reqNamespacePrefix = "namespace-"
	reqGatewayClass    = "gatewayclass"
	reqProbePrefix     = "probe-"

	// The TLSRoute schemas as the Composition's step bootstraps them
	// (package/configuration/tenantgateway/composition.yaml).
	schemaTLSRouteV1       = "schema-tlsroute-v1"
	schemaTLSRouteV1alpha2 = "schema-tlsroute-v1alpha2"
	// The same schemas as the function asks for them itself when the step
	// does not bootstrap them.
	askedTLSRouteV1       = "tlsroute-v1"
	askedTLSRouteV1alpha2 = "tlsroute-v1alpha2"
)

// TLSRoute API versions, newest first: v1 where the cluster serves it, else
// the experimental v1alpha2.
var tlsRouteVersions = []struct{ bootstrap, asked, apiVersion string }{
	{schemaTLSRouteV1, askedTLSRouteV1, gwapiv1.GroupVersion.String()},
	{schemaTLSRouteV1alpha2, askedTLSRouteV1alpha2, gwapiv1.GroupName + "/v1alpha2"},
}

// requireResources asks Crossplane for everything a TenantGateway run reads:
// the platform settings, namespaces, routes, the GatewayClass.
// The selectors depend only on the XR, except the TLSRoute version, which
// waits for the schemas: listing a kind the cluster does not serve fails the
// whole pipeline, so TLSRoutes are requested only in a version Crossplane
// reported a schema for. The Composition's step bootstraps the schemas, so
// that with the required resources Crossplane seeds from the last reconcile
// a steady-state reconcile is one call (see Calls per reconcile in docs/design.md).
// named are the namespaces to look up by name (gateway.NamedNamespaces).
func requireResources(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, tgw *v1alpha1.TenantGateway, named []string, settings fnv1beta1.Input, maxScoped int) {
	if !schemasBootstrapped(req) {
		// A Composition without the bootstrap: ask on every call, since
		// Crossplane keeps only the schemas a call asked for (or bootstrapped).
		for _, v := range tlsRouteVersions {
			response.RequireSchema(rsp, v.asked, v.apiVersion, gateway.KindTLSRoute)
		}
	}
	r := rsp.GetRequirements()
	if r == nil {
		r = &fnv1.Requirements{}
		rsp.Requirements = r
	}
	if r.Resources == nil {
		r.Resources = map[string]*fnv1.ResourceSelector{}
	}
	r.Resources[reqNamespaces] = all("v1", "Namespace", map[string]string{gateway.LabelNamespaceGateway: tgw.GetNamespace()})
	r.Resources[reqPlatform] = platformSelector(settings)
	requireRoutes(req, r, tgw, maxScoped)
	for _, ns := range named {
		r.Resources[reqNamespacePrefix+ns] = byName("v1", "Namespace", ns)
	}
	r.Resources[reqGatewayClass] = byName(gwapiv1.GroupVersion.String(), "GatewayClass", gateway.Defaulted(tgw.Spec).GatewayClassName)
}

// schemasBootstrapped reports whether the request carries every TLSRoute
// schema under the names the Composition's step bootstraps them with.
func schemasBootstrapped(req *fnv1.RunFunctionRequest) bool {
	for _, v := range tlsRouteVersions {
		if _, ok := request.GetRequiredSchema(req, v.bootstrap); !ok {
			return false
		}
	}
	return true
}

// DefaultMaxScopedNamespaces is how many admitted namespaces a TenantGateway
// may have and still list routes namespace by namespace. Every TenantGateway
// reads routes on every run; listing only the admitted namespaces spares a
// child tenant's Gateway the routes of the whole cluster, while a Gateway
// that admits many namespaces (the root tenant's) lists all routes once
// rather than making Crossplane issue a list per namespace.
const DefaultMaxScopedNamespaces = 32

// requireRoutes asks for the HTTPRoutes and TLSRoutes, once the namespaces
// (and, for TLSRoutes, the served version) are known: per admitted namespace
// when there are few, else cluster-wide. Routes from other namespaces are
// ignored by the computation anyway.
func requireRoutes(req *fnv1.RunFunctionRequest, r *fnv1.Requirements, tgw *v1alpha1.TenantGateway, maxScoped int) {
	if _, ok := req.GetRequiredResources()[reqNamespaces]; !ok {
		return
	}
	tlsVersion, ok := tlsRouteVersion(req)
	if !ok {
		return
	}
	kinds := []struct{ key, apiVersion, kind string }{{reqHTTPRoutes, gwapiv1.GroupVersion.String(), gateway.KindHTTPRoute}}
	if tlsVersion != "" {
		kinds = append(kinds, struct{ key, apiVersion, kind string }{reqTLSRoutes, tlsVersion, gateway.KindTLSRoute})
	}
	scopes := gateway.RouteNamespaces(tgw.GetNamespace(), tgw.Spec.AttachedNamespaces, labelledNamespaces(req))
	for _, k := range kinds {
		if len(scopes) > maxScoped {
			// An empty label selector without a namespace lists every
			// object of the kind in every namespace.
			r.Resources[k.key] = all(k.apiVersion, k.kind, nil)
			continue
		}
		for _, ns := range scopes {
			s := all(k.apiVersion, k.kind, nil)
			s.Namespace = &ns
			r.Resources[k.key+"/"+ns] = s
		}
	}
}

// labelledNamespaces are the names of the namespaces labelled as publishing
// through the TenantGateway.
func labelledNamespaces(req *fnv1.RunFunctionRequest) []string {
	items := req.GetRequiredResources()[reqNamespaces].GetItems()
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, str(it.GetResource(), "metadata", "name"))
	}
	return out
}

// tlsRouteVersion returns the TLSRoute apiVersion to list, "" when the
// cluster serves none, and false while the schemas are not resolved yet.
func tlsRouteVersion(req *fnv1.RunFunctionRequest) (string, bool) {
	bootstrapped := schemasBootstrapped(req)
	for _, v := range tlsRouteVersions {
		name := v.asked
		if bootstrapped {
			name = v.bootstrap
		}
		s, ok := request.GetRequiredSchema(req, name)
		if !ok {
			return "", false
		}
		if s != nil {
			return v.apiVersion, true
		}
	}
	return "", true
}

// resolved reports whether Crossplane has answered every requirement this
// run asked for, so the function composes from complete observations.
func resolved(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) bool {
	for name := range rsp.GetRequirements().GetResources() {
		if _, ok := req.GetRequiredResources()[name]; !ok {
			return false
		}
	}
	for name := range rsp.GetRequirements().GetSchemas() {
		if _, ok := request.GetRequiredSchema(req, name); !ok {
			return false
		}
	}
	return true
}

// requireProbes asks Crossplane to look up, by name, each object the
// function is about to compose that it has not observed as ours.
func requireProbes(rsp *fnv1.RunFunctionResponse, need []gateway.Resource) {
	for _, r := range need {
		gvk := r.Object.GetObjectKind().GroupVersionKind()
		ns := r.Object.GetNamespace()
		rsp.Requirements.Resources[reqProbePrefix+r.Key] = &fnv1.ResourceSelector{
			ApiVersion: gvk.GroupVersion().String(),
			Kind:       gvk.Kind,
			Namespace:  &ns,
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: r.Object.GetName()},
		}
	}
}

func all(apiVersion, kind string, labels map[string]string) *fnv1.ResourceSelector {
	if labels == nil {
		labels = map[string]string{}
	}
	return &fnv1.ResourceSelector{
		ApiVersion: apiVersion,
		Kind:       kind,
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}},
	}
}

func byName(apiVersion, kind, name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
}
