// Package fake answers a composition function's requirements the way
// Crossplane does, from objects held in memory, and drives the function
// through Crossplane's requirement loop. Tests and benchmarks use it to put
// the function in the state it is in on a real cluster.
package fake

import (
	"context"
	"fmt"
	"maps"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// MaxCalls is how many times Crossplane calls a function in one reconcile
// before it gives up on the requirements settling.
const MaxCalls = 6

// A Cluster holds objects and the kinds it serves.
type Cluster struct {
	Objects []*structpb.Struct
	// Served maps "<apiVersion> <kind>" to whether a schema is served.
	Served map[string]bool
}

// A Runner is a composition function.
type Runner interface {
	RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)
}

// Resolve answers requirements: by name, or by labels, in one namespace or
// in all, and a schema for each served kind.
func (c Cluster) Resolve(r *fnv1.Requirements) (map[string]*fnv1.Resources, map[string]*fnv1.Schema) {
	res := map[string]*fnv1.Resources{}
	for name, sel := range r.GetResources() {
		items := []*fnv1.Resource{}
		for _, s := range c.Objects {
			if matches(s, sel) {
				items = append(items, &fnv1.Resource{Resource: s})
			}
		}
		res[name] = &fnv1.Resources{Items: items}
	}
	schemas := map[string]*fnv1.Schema{}
	for name, sel := range r.GetSchemas() {
		s := &fnv1.Schema{}
		if c.Served[sel.GetApiVersion()+" "+sel.GetKind()] {
			s.OpenapiV3 = &structpb.Struct{Fields: map[string]*structpb.Value{"type": structpb.NewStringValue("object")}}
		}
		schemas[name] = s
	}
	return res, schemas
}

func matches(s *structpb.Struct, sel *fnv1.ResourceSelector) bool {
	f := s.GetFields()
	md := f["metadata"].GetStructValue().GetFields()
	if f["apiVersion"].GetStringValue() != sel.GetApiVersion() || f["kind"].GetStringValue() != sel.GetKind() {
		return false
	}
	if sel.Namespace != nil && md["namespace"].GetStringValue() != sel.GetNamespace() {
		return false
	}
	switch m := sel.GetMatch().(type) {
	case *fnv1.ResourceSelector_MatchName:
		return md["name"].GetStringValue() == m.MatchName
	case *fnv1.ResourceSelector_MatchLabels:
		labels := md["labels"].GetStructValue().GetFields()
		for k, v := range m.MatchLabels.GetLabels() {
			if labels[k].GetStringValue() != v {
				return false
			}
		}
	}
	return true
}

// Run calls the function the way Crossplane v2.4 does in one pipeline step
// (its FetchingFunctionRunner): again and again with its requirements
// resolved, until they stop changing, keeping whatever the request carried
// up front (bootstrap and seeded requirements, see Reconcile). When the first
// call's requirements resolve to exactly what that call was given, its
// response is final. It returns the last request, the last response, and how
// many calls it took.
func (c Cluster) Run(ctx context.Context, f Runner, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, int, error) {
	var last *fnv1.Requirements
	upfrontResources, upfrontSchemas := req.GetRequiredResources(), req.GetRequiredSchemas()
	for i := 1; i <= MaxCalls; i++ {
		rsp, err := f.RunFunction(ctx, req)
		if err != nil {
			return req, nil, i, err
		}
		if rsp, err = received(rsp); err != nil {
			return req, nil, i, err
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
				return req, rsp, i, nil
			}
		}
		if proto.Equal(rsp.GetRequirements(), last) {
			return req, rsp, i, nil
		}
		resources, schemas := c.Resolve(rsp.GetRequirements())
		resources, schemas = merge(upfrontResources, resources), merge(upfrontSchemas, schemas)
		if i == 1 && maps.EqualFunc(req.GetRequiredResources(), resources, equal) && maps.EqualFunc(req.GetRequiredSchemas(), schemas, equal) {
			return req, rsp, i, nil
		}
		last = rsp.GetRequirements()
		req = proto.Clone(req).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
		req.RequiredResources, req.RequiredSchemas = resources, schemas
	}
	return req, nil, MaxCalls, fmt.Errorf("requirements did not settle within %d calls", MaxCalls)
}

// received is the response as Crossplane decodes it from the wire: a
// function may keep parts of its response as encoded bytes.
func received(rsp *fnv1.RunFunctionResponse) (*fnv1.RunFunctionResponse, error) {
	b, err := proto.Marshal(rsp)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the response: %w", err)
	}
	out := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("cannot decode the response: %w", err)
	}
	return out, nil
}

// Reconcile runs one pipeline step as Crossplane v2.4 does on a reconcile:
// the request carries the step's bootstrap requirements (a Composition's
// requirements.requiredResources and requiredSchemas) and, seeded, the
// resources the step required on the last reconcile (previous, nil on the
// first), all resolved from the cluster as it is now; then Run.
func (c Cluster) Reconcile(ctx context.Context, f Runner, req *fnv1.RunFunctionRequest, bootstrap, previous *fnv1.Requirements) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, int, error) {
	resources, schemas := c.Resolve(bootstrap)
	seeded, _ := c.Resolve(&fnv1.Requirements{Resources: previous.GetResources()})
	req = proto.Clone(req).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
	req.RequiredResources, req.RequiredSchemas = merge(seeded, resources), schemas
	return c.Run(ctx, f, req)
}

// merge returns the entries of b over those of a.
func merge[V any](a, b map[string]V) map[string]V {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]V{}
	}
	maps.Copy(out, b)
	return out
}

func equal[M proto.Message](a, b M) bool { return proto.Equal(a, b) }

// A Reconciler plays Crossplane v2.4's side across the reconciles of one
// XR's pipeline step: each Reconcile runs the step with the Bootstrap and
// the resources it required last time, then applies the desired state, so
// that the next reconcile observes it (composed resources and the XR's
// status).
type Reconciler struct {
	Cluster   Cluster
	Bootstrap *fnv1.Requirements
	// Previous are the requirements of the last reconcile, nil before the
	// first.
	Previous *fnv1.Requirements
	// Request holds the observed XR and composed resources.
	Request *fnv1.RunFunctionRequest
}

// Reconcile runs the step once and applies its desired state unless the
// function returned a Fatal result. It returns the last response and how
// many calls it took.
func (r *Reconciler) Reconcile(ctx context.Context, f Runner) (*fnv1.RunFunctionResponse, int, error) {
	_, rsp, calls, err := r.Cluster.Reconcile(ctx, f, r.Request, r.Bootstrap, r.Previous)
	if err != nil {
		return rsp, calls, err
	}
	for _, res := range rsp.GetResults() {
		if res.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return rsp, calls, nil
		}
	}
	r.Previous = rsp.GetRequirements()
	req := proto.Clone(r.Request).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
	req.Observed.Resources = rsp.GetDesired().GetResources()
	if st, ok := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; ok {
		req.Observed.Composite.Resource.Fields["status"] = st
	}
	r.Request = req
	return rsp, calls, nil
}

// Bootstrap reads the requirements the first pipeline step of a Composition
// (YAML) bootstraps.
func Bootstrap(composition []byte) (*fnv1.Requirements, error) {
	c := &xpv1.Composition{}
	if err := yaml.Unmarshal(composition, c); err != nil {
		return nil, fmt.Errorf("cannot read Composition: %w", err)
	}
	out := &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{}, Schemas: map[string]*fnv1.SchemaSelector{}}
	if len(c.Spec.Pipeline) == 0 || c.Spec.Pipeline[0].Requirements == nil {
		return out, nil
	}
	rq := c.Spec.Pipeline[0].Requirements
	for _, s := range rq.RequiredSchemas {
		out.Schemas[s.RequirementName] = &fnv1.SchemaSelector{ApiVersion: s.APIVersion, Kind: s.Kind}
	}
	for _, s := range rq.RequiredResources {
		sel := &fnv1.ResourceSelector{ApiVersion: s.APIVersion, Kind: s.Kind, Namespace: s.Namespace}
		if s.Name != nil {
			sel.Match = &fnv1.ResourceSelector_MatchName{MatchName: *s.Name}
		} else {
			sel.Match = &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: s.MatchLabels}}
		}
		out.Resources[s.RequirementName] = sel
	}
	return out, nil
}
