// Package fake answers a composition function's requirements the way
// Crossplane does, from objects held in memory, and drives the function
// through Crossplane's requirement loop. Tests and benchmarks use it to put
// the function in the state it is in on a real cluster.
package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// MaxCalls is how many times Crossplane calls a function in one reconcile
// before it gives up on the requirements settling.
const MaxCalls = live.MaxCalls

// A Cluster holds objects and the kinds it serves.
type Cluster struct {
	Objects []*structpb.Struct
	// Served maps "<apiVersion> <kind>" to whether a schema is served.
	Served map[string]bool
}

// A Runner is a composition function.
type Runner = live.Runner

// source is a Cluster as live's Source: selectors answered by a walk over
// every object, which the few objects of a test afford.
type source struct{ c Cluster }

func (s source) Select(_ context.Context, sel *fnv1.ResourceSelector) ([]*structpb.Struct, error) {
	var out []*structpb.Struct
	for _, o := range s.c.Objects {
		if live.Matches(o, sel) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s source) Served(_ context.Context, apiVersion, kind string) (bool, error) {
	return s.c.Served[apiVersion+" "+kind], nil
}

// Resolve answers requirements: by name, or by labels, in one namespace or
// in all, and a schema for each served kind.
func (c Cluster) Resolve(r *fnv1.Requirements) (map[string]*fnv1.Resources, map[string]*fnv1.Schema) {
	// A Cluster in memory answers every selector.
	res, schemas, _ := live.Resolve(context.Background(), source{c}, r)
	return res, schemas
}

// Run calls the function the way Crossplane v2.4 does in one pipeline step
// (live.Run) with the cluster's objects.
func (c Cluster) Run(ctx context.Context, f Runner, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, int, error) {
	return live.Run(ctx, source{c}, f, req)
}

// Reconcile runs one pipeline step as Crossplane v2.4 does on a reconcile
// (live.Reconcile) with the cluster's objects.
func (c Cluster) Reconcile(ctx context.Context, f Runner, req *fnv1.RunFunctionRequest, bootstrap, previous *fnv1.Requirements) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse, int, error) {
	return live.Reconcile(ctx, source{c}, f, req, bootstrap, previous)
}

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
	r.Cluster.Objects = applyConfigMaps(r.Cluster.Objects, rsp.GetDesired().GetResources())
	req := proto.Clone(r.Request).(*fnv1.RunFunctionRequest) //nolint:forcetypeassert // Clone keeps the type.
	req.Observed.Resources = rsp.GetDesired().GetResources()
	if st, ok := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"]; ok {
		req.Observed.Composite.Resource.Fields["status"] = st
	}
	r.Request = req
	return rsp, calls, nil
}

// applyConfigMaps plays provider-kubernetes for the ConfigMaps the desired
// Objects write (the order ledger's records, route reports): each replaces
// the object of its namespace and name. Other manifests are left out, so
// that what a test puts in the cluster stays what the function reads.
func applyConfigMaps(objects []*structpb.Struct, desired map[string]*fnv1.Resource) []*structpb.Struct {
	for _, key := range slices.Sorted(maps.Keys(desired)) {
		o := desired[key].GetResource()
		if o.GetFields()["kind"].GetStringValue() != "Object" {
			continue
		}
		m := o.GetFields()["spec"].GetStructValue().GetFields()["forProvider"].GetStructValue().GetFields()["manifest"].GetStructValue()
		if m.GetFields()["kind"].GetStringValue() != "ConfigMap" {
			continue
		}
		id := func(s *structpb.Struct) string {
			md := s.GetFields()["metadata"].GetStructValue().GetFields()
			return s.GetFields()["kind"].GetStringValue() + "/" + md["namespace"].GetStringValue() + "/" + md["name"].GetStringValue()
		}
		objects = slices.DeleteFunc(slices.Clone(objects), func(s *structpb.Struct) bool { return id(s) == id(m) })
		objects = append(objects, m)
	}
	return objects
}

// Bootstrap reads the requirements the first pipeline step of a Composition
// (YAML) bootstraps.
func Bootstrap(composition []byte) (*fnv1.Requirements, error) {
	c := &xpv1.Composition{}
	if err := yaml.Unmarshal(composition, c); err != nil {
		return nil, fmt.Errorf("cannot read Composition: %w", err)
	}
	if len(c.Spec.Pipeline) == 0 {
		return live.StepRequirements(xpv1.PipelineStep{}), nil
	}
	return live.StepRequirements(c.Spec.Pipeline[0]), nil
}
