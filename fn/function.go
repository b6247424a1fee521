package fn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
)

// Function serves RunFunction for every composite kind this project defines.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log       logging.Logger
	ttl       time.Duration
	maxScoped int
	metrics   *Metrics
	// now is the clock the ACME order budget reads.
	now func() time.Time
}

// An Option configures a Function.
type Option func(*Function)

// WithLogger sets the Function's logger.
func WithLogger(l logging.Logger) Option { return func(f *Function) { f.log = l } }

// WithTTL sets the TTL of every response.
func WithTTL(d time.Duration) Option { return func(f *Function) { f.ttl = d } }

// WithMaxScopedNamespaces sets how many admitted namespaces a TenantGateway
// may have and still list routes namespace by namespace; 0 always lists them
// cluster-wide.
func WithMaxScopedNamespaces(n int) Option { return func(f *Function) { f.maxScoped = n } }

// WithClock sets the clock the ACME order budget reads (see Certificate
// orders in docs/design.md): a fixed one makes renders reproducible.
func WithClock(now func() time.Time) Option { return func(f *Function) { f.now = now } }

// WithMetrics counts every call in m.
func WithMetrics(m *Metrics) Option { return func(f *Function) { f.metrics = m } }

// NewFunction returns a Function with the supplied options.
func NewFunction(o ...Option) *Function {
	f := &Function{log: logging.NewNopLogger(), ttl: DefaultTTL, maxScoped: DefaultMaxScopedNamespaces, now: time.Now}
	for _, fn := range o {
		fn(f)
	}
	return f
}

// RunFunction runs one pipeline step. Every failure is reported as a result
// on the response; the gRPC error is reserved for a request that cannot be
// answered at all.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	start := time.Now()
	var composed gatewayRun
	rsp, kind := f.run(req, &composed)
	f.metrics.observe(kind, req, rsp, &composed, time.Since(start))
	return rsp, nil
}

// run runs one pipeline step and says which kind of XR it ran for, and in
// composed what it composed for a TenantGateway.
func (f *Function) run(req *fnv1.RunFunctionRequest, composed *gatewayRun) (*fnv1.RunFunctionResponse, string) {
	rsp := response.To(req, f.ttl)

	in := &fnv1beta1.Input{}
	if req.GetInput() != nil {
		if err := jsonobj.Decode(req.GetInput().AsMap(), in); err != nil {
			response.Fatal(rsp, fmt.Errorf("cannot read the function input (apiVersion %s, kind Input): %w", fnv1beta1.SchemeGroupVersion, err))
			return rsp, kindOther
		}
	}
	settings := in.WithDefaults()
	// Crossplane does not validate a step's input against the input CRD.
	if errs := validation.IsDNS1123Label(settings.CertManagerNamespace); len(errs) > 0 {
		response.Fatal(rsp, fmt.Errorf("function input certManagerNamespace %q is not a namespace name: %s", settings.CertManagerNamespace, strings.Join(errs, "; ")))
		return rsp, kindOther
	}

	xr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot get the observed composite resource: %w", err))
		return rsp, kindOther
	}
	gvk := xr.Resource.GroupVersionKind()
	log := f.log.WithValues("xr-kind", gvk.Kind, "xr-namespace", xr.Resource.GetNamespace(), "xr-name", xr.Resource.GetName())

	switch gvk.GroupKind() {
	case v1alpha1.TenantGatewayGroupVersionKind.GroupKind():
		composed.called(gvk.Kind, xr.Resource.GetNamespace(), xr.Resource.GetName())
		if out := runTenantGateway(log, req, rsp, xr, settings, f.maxScoped, f.now()); out != nil {
			composed.composed(xr.Resource.GetNamespace(), xr.Resource.GetName(), out)
		}
	case appsv1alpha1.XTenantGroupVersionKind.GroupKind():
		composed.called(gvk.Kind, xr.Resource.GetNamespace(), xr.Resource.GetName())
		runTenant(log, req, rsp, xr, settings)
	default:
		response.Fatal(rsp, fmt.Errorf("function-tenant-gateway composes %s and %s, but the composite resource is a %s", v1alpha1.TenantGatewayGroupVersionKind.GroupKind(), appsv1alpha1.XTenantGroupVersionKind.GroupKind(), gvk.GroupKind()))
		return rsp, kindOther
	}
	return rsp, gvk.Kind
}
