// Package live plays Crossplane's side of a pipeline step on a live platform
// or on objects in memory: it answers a function's requirements the way
// Crossplane does and drives the function through Crossplane's requirement
// loop. The operators' commands read the cluster through its Reader; the
// tests and benchmarks hand it objects of their own.
package live

import (
	"context"
	"fmt"
	"maps"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// MaxCalls is how many times Crossplane calls a function in one reconcile
// before it gives up on the requirements settling.
const MaxCalls = 6

// A Source answers what a function may require: the objects a selector
// matches, and whether a kind is served (Crossplane then answers a schema
// requirement with its schema).
type Source interface {
	Select(ctx context.Context, sel *fnv1.ResourceSelector) ([]*structpb.Struct, error)
	Served(ctx context.Context, apiVersion, kind string) (bool, error)
}

// A Runner is a composition function.
type Runner interface {
	RunFunction(context.Context, *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)
}

// Resolve answers requirements: the objects each selector matches, and a
// schema for each served kind (a schema without content for one that is not).
func Resolve(ctx context.Context, src Source, r *fnv1.Requirements) (map[string]*fnv1.Resources, map[string]*fnv1.Schema, error) {
	res := make(map[string]*fnv1.Resources, len(r.GetResources()))
	for name, sel := range r.GetResources() {
		objs, err := src.Select(ctx, sel)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot resolve requirement %s: %w", name, err)
		}
		items := make([]*fnv1.Resource, 0, len(objs))
		for _, s := range objs {
			items = append(items, &fnv1.Resource{Resource: s})
		}
		res[name] = &fnv1.Resources{Items: items}
	}
	schemas := make(map[string]*fnv1.Schema, len(r.GetSchemas()))
	for name, sel := range r.GetSchemas() {
		served, err := src.Served(ctx, sel.GetApiVersion(), sel.GetKind())
		if err != nil {
			return nil, nil, fmt.Errorf("cannot resolve schema requirement %s: %w", name, err)
		}
		s := &fnv1.Schema{}
		if served {
			s.OpenapiV3 = &structpb.Struct{Fields: map[string]*structpb.Value{"type": structpb.NewStringValue("object")}}
		}
		schemas[name] = s
	}
	return res, schemas, nil
}

// Matches reports whether an object matches a selector: its apiVersion and
// kind, its namespace when the selector names one, and its name or labels.
func Matches(s *structpb.Struct, sel *fnv1.ResourceSelector) bool {
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
func Run(ctx context.Context, src Source, f Runner, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, int, error) {
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
		resources, schemas, err := Resolve(ctx, src, rsp.GetRequirements())
		if err != nil {
			return req, rsp, i, err
		}
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

// Reconcile runs one pipeline step as Crossplane v2.4 does on a reconcile:
// the request carries the step's bootstrap requirements (a Composition's
// requirements.requiredResources and requiredSchemas) and, seeded, the
// resources the step required on the last reconcile (previous, nil on the
// first), all resolved from the source as it is now; then Run.
func Reconcile(ctx context.Context, src Source, f Runner, req *fnv1.RunFunctionRequest, bootstrap, previous *fnv1.Requirements) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, int, error) {
	resources, schemas, err := Resolve(ctx, src, bootstrap)
	if err != nil {
		return req, nil, 0, err
	}
	seeded, _, err := Resolve(ctx, src, &fnv1.Requirements{Resources: previous.GetResources()})
	if err != nil {
		return req, nil, 0, err
	}
	req = proto.Clone(req).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
	req.RequiredResources, req.RequiredSchemas = merge(seeded, resources), schemas
	return Run(ctx, src, f, req)
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

// StepRequirements are the requirements a Composition's pipeline step
// bootstraps (its requirements.requiredResources and requiredSchemas).
func StepRequirements(step xpv1.PipelineStep) *fnv1.Requirements {
	out := &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{}, Schemas: map[string]*fnv1.SchemaSelector{}}
	if step.Requirements == nil {
		return out
	}
	rq := step.Requirements
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
	return out
}

// received is the response as Crossplane decodes it from the wire: a
// function may keep parts of its response as encoded bytes (this one keeps
// its desired resources so), which an in-process caller must decode to read.
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
