package fn

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tenant"
	"github.com/cozystack/function-tenant-gateway/fn/text"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

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

// runTenantGateway composes one TenantGateway and returns what it composed,
// for the metrics; nil when the call answered no composition.
func runTenantGateway(log logging.Logger, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, xr *resource.Composite, settings fnv1beta1.Input, maxScoped int, now time.Time) *gateway.Output {
	tgw, err := decodeTenantGateway(xr)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot decode TenantGateway %s/%s (is every spec field of the type the XRD declares?): %w", xr.Resource.GetNamespace(), xr.Resource.GetName(), err))
		return nil
	}

	named := gateway.NamedNamespaces(tgw.GetNamespace(), tgw.Spec.AttachedNamespaces, maps.Keys(req.GetObserved().GetResources()))
	requireResources(req, rsp, tgw, named, settings, maxScoped)
	if !resolved(req, rsp) {
		// Compose only from complete observations: Crossplane calls again
		// with the required resources, and uses only the last answer.
		log.Debug("waiting for required resources")
		return nil
	}
	// The platform settings win over the input, which is their default
	// (Platform settings in docs/design.md). A cluster without them is
	// normal for TenantGateways written by hand: no warning.
	data, _ := platformData(req)
	certManagerNamespace, err := tenant.CertManagerNamespace(data, settings.CertManagerNamespace)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the platform settings in EnvironmentConfig %s: %w", settings.PlatformConfigName, err))
		return nil
	}

	spec := tgwspec.Defaulted(tgw.Spec)
	quota, err := tenant.CertificateOrders(data, string(spec.IssuerName))
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the platform settings in EnvironmentConfig %s: %w", settings.PlatformConfigName, err))
		return nil
	}
	ledger, skippedRecords := observeLedger(req)

	in := gateway.Input{
		Name:                 tgw.GetName(),
		Namespace:            tgw.GetNamespace(),
		UID:                  string(tgw.GetUID()),
		Spec:                 tgw.Spec,
		CertManagerNamespace: certManagerNamespace,
		Observed:             observeGatewayComposed(req),
		Probes:               observeProbes(req),
		GatewayClass:         observeGatewayClass(req),
		NamedNamespaces:      observeNamedNamespaces(req, named),
		Now:                  now,
		Quota:                quota,
		LedgerNamespace:      certManagerNamespace,
		Ledger:               ledger,
		PlatformApex:         tenant.PlatformApex(data),
	}
	var warnings []string
	in.Previous, warnings = observePrevious(req)
	routes, namespaces, skipped := observe(req)
	in.Routes, in.Namespaces = routes, namespaces
	skipped = append(skipped, skippedRecords...)
	if len(skipped) > 0 {
		// One warning for all of them: every warning becomes an event.
		warnings = append(warnings, text.BoundedList(fmt.Sprintf("skipping %d malformed routes and namespaces: ", len(skipped)), skipped, "; ", ""))
	}

	out, err := gateway.Compose(in)
	if err != nil {
		// A Fatal result stops the pipeline before Crossplane applies
		// anything, so the last good desired state stays in place.
		var invalid *gateway.InvalidSpecError
		if errors.As(err, &invalid) {
			response.Fatal(rsp, err)
			return nil
		}
		response.Fatal(rsp, fmt.Errorf("cannot compose TenantGateway %s/%s: %w", tgw.GetNamespace(), tgw.GetName(), err))
		return nil
	}
	requireProbes(rsp, out.Probes)
	if !resolved(req, rsp) {
		log.Debug("waiting for the ownership probes")
		return nil
	}

	for _, w := range append(warnings, out.Warnings...) {
		response.Warning(rsp, errors.New(w)).TargetComposite()
	}
	for _, c := range out.Conditions {
		setCondition(rsp, string(c.Type), string(c.Reason), c.Status, c.Message).TargetComposite()
	}
	if err := setDesired(req, rsp, out, tgw.GetGeneration()); err != nil {
		response.Fatal(rsp, err)
		return nil
	}
	log.Debug("composed TenantGateway", "cert-mode", out.CertMode, "resources", len(out.Resources), "routes", len(in.Routes), "hostnames", len(out.Hostnames), "listeners", out.Listeners, "left-out", out.LeftOut.Total(), "route-reports-left-out", out.ReportsLeftOut)
	return out
}

// setDesired overlays the composed resources on the desired state of earlier
// pipeline steps and writes the status the function owns, computed from the
// XR's generation gen.
func setDesired(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, out *gateway.Output, gen int64) error {
	if err := setComposed(req, rsp, out.Resources, out.Ready); err != nil {
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

// Names of the resources and schemas a TenantGateway run requires.
const (
	reqHTTPRoutes      = "httproutes"
	reqTLSRoutes       = "tlsroutes"
	reqNamespaces      = "namespaces"
	reqNamespacePrefix = "namespace-"
	reqGatewayClass    = "gatewayclass"
	reqProbePrefix     = "probe-"
	reqOrderLedger     = "order-ledger"
	kindConfigMap      = "ConfigMap"

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
	r.Resources[reqNamespaces] = all("v1", "Namespace", map[string]string{kube.LabelNamespaceGateway: tgw.GetNamespace()})
	r.Resources[reqPlatform] = platformSelector(settings)
	requireRoutes(req, r, tgw, maxScoped)
	for _, ns := range named {
		r.Resources[reqNamespacePrefix+ns] = byName("v1", "Namespace", ns)
	}
	r.Resources[reqGatewayClass] = byName(gwapiv1.GroupVersion.String(), kindGatewayClass, tgwspec.Defaulted(tgw.Spec).GatewayClassName)
	requireLedger(req, r, tgw, settings)
}

// requireLedger asks for the records of the order ledger of the apex's
// registered domain where the platform settings say they are kept (the
// namespace of gateway.certManagerNamespace: a platform namespace no tenant
// writes). A setting that does not read is left to the run, which
// ends Fatal naming it.
func requireLedger(req *fnv1.RunFunctionRequest, r *fnv1.Requirements, tgw *v1alpha1.TenantGateway, settings fnv1beta1.Input) {
	if tgw.Spec.Apex == "" {
		return
	}
	// Before the settings are read the input's default stands, so that a
	// platform that keeps it asks for the ledger on the first call.
	data, _ := platformData(req)
	ns, err := tenant.CertManagerNamespace(data, settings.CertManagerNamespace)
	if err != nil {
		return
	}
	s := all("v1", kindConfigMap, map[string]string{gateway.LabelOrderLedger: gateway.LedgerLabel(tgw.Spec.Apex)})
	s.Namespace = &ns
	r.Resources[reqOrderLedger] = s
}

// observeLedger decodes the records of the order ledger; a record that does
// not decode is skipped, with a warning (it counts for nothing, as a
// record an operator deleted).
func observeLedger(req *fnv1.RunFunctionRequest) ([]acme.OrderRecord, []string) {
	var out []acme.OrderRecord
	var skipped []string
	for _, it := range req.GetRequiredResources()[reqOrderLedger].GetItems() {
		s := it.GetResource()
		rec, err := gateway.DecodeLedgerRecord(stringMap(valueView(field(s, "data"))))
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("ConfigMap %s/%s: %v", str(s, keyMetadata, "namespace"), str(s, keyMetadata, "name"), err))
			continue
		}
		out = append(out, rec)
	}
	return out, skipped
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

// requireProbes asks Crossplane to look up, by name, each object the
// function is about to compose that it has not observed as ours.
func requireProbes(rsp *fnv1.RunFunctionResponse, need []kube.Resource) {
	for _, r := range need {
		gvk := r.Object.GetObjectKind().GroupVersionKind()
		ns := r.Object.GetNamespace()
		s := byName(gvk.GroupVersion().String(), gvk.Kind, r.Object.GetName())
		s.Namespace = &ns
		rsp.Requirements.Resources[reqProbePrefix+r.Key] = s
	}
}

// observe reads the routes and namespaces a TenantGateway run required, and
// says what it skipped and why.
func observe(req *fnv1.RunFunctionRequest) ([]gateway.Route, []gateway.Namespace, []string) {
	httpRoutes, w1 := observeRoutes(req, reqHTTPRoutes, gateway.KindHTTPRoute)
	tlsRoutes, w2 := observeRoutes(req, reqTLSRoutes, gateway.KindTLSRoute)
	for _, name := range slices.Sorted(maps.Keys(req.GetRequiredResources())) {
		if ns, ok := strings.CutPrefix(name, reqHTTPRoutes+"/"); ok && ns != "" {
			r, w := observeRoutes(req, name, gateway.KindHTTPRoute)
			httpRoutes, w1 = append(httpRoutes, r...), append(w1, w...)
		}
		if ns, ok := strings.CutPrefix(name, reqTLSRoutes+"/"); ok && ns != "" {
			r, w := observeRoutes(req, name, gateway.KindTLSRoute)
			tlsRoutes, w2 = append(tlsRoutes, r...), append(w2, w...)
		}
	}
	namespaces, w3 := observeNamespaces(req, reqNamespaces)
	return append(httpRoutes, tlsRoutes...), namespaces, slices.Concat(w1, w2, w3)
}

// observeGatewayClass reads the GatewayClass requirement; nil when the class
// does not exist. Supported features are objects with a name since Gateway
// API v1.2, plain strings before.
func observeGatewayClass(req *fnv1.RunFunctionRequest) *gateway.Class {
	items := req.GetRequiredResources()[reqGatewayClass].GetItems()
	if len(items) == 0 {
		return nil
	}
	s := items[0].GetResource()
	gc := &gateway.Class{Name: str(s, keyMetadata, "name"), ControllerName: str(s, keySpec, "controllerName")}
	for _, f := range field(s, "status", "supportedFeatures").GetListValue().GetValues() {
		name := f.GetStringValue()
		if name == "" {
			name = str(f.GetStructValue(), "name")
		}
		if name != "" {
			gc.SupportedFeatures = append(gc.SupportedFeatures, name)
		}
	}
	return gc
}

// observeNamedNamespaces reads the namespaces looked up by name; a nil value
// means Crossplane found no such namespace.
func observeNamedNamespaces(req *fnv1.RunFunctionRequest, names []string) map[string]*gateway.Namespace {
	out := make(map[string]*gateway.Namespace, len(names))
	for _, n := range names {
		items := req.GetRequiredResources()[reqNamespacePrefix+n].GetItems()
		if len(items) == 0 {
			out[n] = nil
			continue
		}
		s := items[0].GetResource()
		out[n] = &gateway.Namespace{Name: n, Labels: stringMap(valueView(field(s, keyMetadata, "labels"))), Annotations: stringMap(valueView(field(s, keyMetadata, "annotations")))}
	}
	return out
}

// observeProbes reads the look-ups by name of resources about to be composed.
func observeProbes(req *fnv1.RunFunctionRequest) map[string]gateway.Probe {
	out := map[string]gateway.Probe{}
	for name, rs := range req.GetRequiredResources() {
		key, ok := strings.CutPrefix(name, reqProbePrefix)
		if !ok {
			continue
		}
		p := gateway.Probe{}
		if items := rs.GetItems(); len(items) > 0 {
			p.Exists = true
			for _, ref := range field(items[0].GetResource(), keyMetadata, "ownerReferences").GetListValue().GetValues() {
				r := ref.GetStructValue()
				if field(r, "controller").GetBoolValue() {
					p.ControllerUID = str(r, "uid")
				}
			}
		}
		out[key] = p
	}
	return out
}

// observePrevious reads the status the last run wrote on the XR: the
// function's own memory. A status that does not decode (someone edited it)
// is ignored with a warning, never fatal: the next run writes it anew.
func observePrevious(req *fnv1.RunFunctionRequest) (gateway.PreviousStatus, []string) {
	p := gateway.PreviousStatus{Listeners: map[string]string{}, ChildApexes: map[string]bool{}}
	st := field(req.GetObserved().GetComposite().GetResource(), "status").GetStructValue()
	if st == nil {
		return p, nil
	}
	var status v1alpha1.TenantGatewayStatus
	if err := jsonobj.Decode(st.AsMap(), &status); err != nil {
		return p, []string{fmt.Sprintf("ignoring the TenantGateway's status as the function's memory of the last run: %v", err)}
	}
	for _, l := range status.Listeners {
		p.Listeners[l.Name] = l.Hostname
	}
	for _, c := range status.ChildApexes {
		if c.State == v1alpha1.ChildApexListening {
			p.ChildApexes[c.Apex] = true
		}
	}
	if status.Digests != nil {
		p.Digests = *status.Digests
	}
	return p, nil
}
