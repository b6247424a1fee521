package main

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// The kinds Crossplane keeps a Composition's pipeline in, and the annotation
// by which it names each composed resource for the function.
const (
	apiVersionCompositions   = "apiextensions.crossplane.io/v1"
	kindComposition          = "Composition"
	kindCompositionRevision  = "CompositionRevision"
	annotationCompositionKey = "crossplane.io/composition-resource-name"
)

// composites are the kinds of composite resource the function composes:
// TenantGateways (Crossplane v2's namespaced XR, its Crossplane fields
// under spec.crossplane) and XTenants (a legacy cluster-scoped XR, its
// Crossplane fields straight under spec).
var composites = []struct {
	apiVersion, kind string
	crossplane       []string
}{
	{v1alpha1.TenantGatewayGroupVersionKind.GroupVersion().String(), v1alpha1.TenantGatewayGroupVersionKind.Kind, []string{"spec", "crossplane"}},
	{appsv1alpha1.XTenantGroupVersionKind.GroupVersion().String(), appsv1alpha1.XTenantGroupVersionKind.Kind, []string{"spec"}},
}

// A step is what Crossplane hands the function for one XR: the request of
// its first call (the observed XR and composed resources, the step's input
// and context) and the requirements the step bootstraps.
type step struct {
	req       *fnv1.RunFunctionRequest
	bootstrap *fnv1.Requirements
}

// reader reads what Crossplane would hand the function, from a cluster.
type reader struct {
	r *live.Reader
	// function is the name of the Function whose pipeline step is run.
	function string
	// pipelines are the pipelines read, by "Kind name".
	pipelines map[string][]xpv1.PipelineStep
}

// xrs are every composite resource of the kinds the function composes, in
// the order the plan reports them: by kind, then namespace and name. A kind
// the cluster does not serve has none.
func (rd *reader) xrs(ctx context.Context) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, c := range composites {
		l, err := rd.r.List(ctx, c.apiVersion, c.kind, "", nil)
		switch {
		case errors.Is(err, live.ErrNotServed):
			continue
		case err != nil:
			return nil, err
		}
		sort.Slice(l, func(i, j int) bool {
			return l[i].GetNamespace()+"/"+l[i].GetName() < l[j].GetNamespace()+"/"+l[j].GetName()
		})
		for i := range l {
			out = append(out, &l[i])
		}
	}
	return out, nil
}

// crossplaneFields is where an XR keeps the fields Crossplane writes.
func crossplaneFields(xr *unstructured.Unstructured) []string {
	for _, c := range composites {
		if c.kind == xr.GetKind() {
			return c.crossplane
		}
	}
	return []string{"spec"}
}

// step reads what Crossplane hands the function's step for xr: the
// pipeline of the CompositionRevision the XR runs (else of its
// Composition), the observed composed resources its resourceRefs name.
// Steps before the function's are not run: their desired state and context
// are not in the request (the Compositions this project ships have none).
//
//nolint:gocyclo // The request's parts read in Crossplane's order, each with its own error.
func (rd *reader) step(ctx context.Context, xr *unstructured.Unstructured) (*step, error) {
	cp := crossplaneFields(xr)
	pipeline, err := rd.pipeline(ctx, xr, cp)
	if err != nil {
		return nil, err
	}
	var st *xpv1.PipelineStep
	for i := range pipeline {
		if pipeline[i].FunctionRef.Name == rd.function {
			st = &pipeline[i]
			break
		}
	}
	if st == nil {
		return nil, fmt.Errorf("its Composition has no pipeline step of Function %s (--function names another)", rd.function)
	}
	observedXR, err := structpb.NewStruct(xr.Object)
	if err != nil {
		return nil, fmt.Errorf("cannot read the composite resource: %w", err)
	}
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: observedXR}, Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{},
		// The function reads nothing from the context; no step before it
		// writes any in the Compositions this project ships.
		Context: &structpb.Struct{},
	}
	if st.Input != nil && len(st.Input.Raw) > 0 {
		in := &structpb.Struct{}
		if err := in.UnmarshalJSON(st.Input.Raw); err != nil {
			return nil, fmt.Errorf("cannot read the input of pipeline step %s: %w", st.Step, err)
		}
		req.Input = in
	}
	refs, _, _ := unstructured.NestedSlice(xr.Object, append(append([]string{}, cp...), "resourceRefs")...)
	for _, ref := range refs {
		m, _ := ref.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		ns := str("namespace")
		if ns == "" {
			ns = xr.GetNamespace()
		}
		obj, err := rd.composed(ctx, str("apiVersion"), str("kind"), ns, str("name"))
		if err != nil {
			return nil, err
		}
		if obj == nil {
			// Gone: Crossplane observes nothing under its name either.
			continue
		}
		key := obj.GetFields()["metadata"].GetStructValue().GetFields()["annotations"].GetStructValue().GetFields()[annotationCompositionKey].GetStringValue()
		if key != "" {
			req.Observed.Resources[key] = &fnv1.Resource{Resource: obj}
		}
	}
	return &step{req: req, bootstrap: live.StepRequirements(*st)}, nil
}

// composed reads a composed resource; nil when it is gone, or of a kind no
// longer served.
func (rd *reader) composed(ctx context.Context, apiVersion, kind, ns, name string) (*structpb.Struct, error) {
	obj, err := rd.r.Object(ctx, apiVersion, kind, ns, name)
	if errors.Is(err, live.ErrNotServed) {
		return nil, nil
	}
	if obj == nil && err == nil {
		// A cluster-scoped kind: the XR's namespace is not its.
		obj, err = rd.r.Object(ctx, apiVersion, kind, "", name)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read composed resource %s %s/%s: %w", kind, ns, name, err)
	}
	return obj, nil
}

// pipeline is the pipeline the XR runs: its CompositionRevision's, else its
// Composition's.
func (rd *reader) pipeline(ctx context.Context, xr *unstructured.Unstructured, cp []string) ([]xpv1.PipelineStep, error) {
	for _, ref := range []struct{ field, kind string }{{"compositionRevisionRef", kindCompositionRevision}, {"compositionRef", kindComposition}} {
		name, _, _ := unstructured.NestedString(xr.Object, append(append([]string{}, cp...), ref.field, "name")...)
		if name == "" {
			continue
		}
		key := ref.kind + " " + name
		if p, ok := rd.pipelines[key]; ok {
			return p, nil
		}
		u, err := rd.r.Get(ctx, apiVersionCompositions, ref.kind, "", name)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s %s: %w", ref.kind, name, err)
		}
		if u == nil {
			continue
		}
		raw, _, _ := unstructured.NestedSlice(u.Object, "spec", "pipeline")
		var spec struct {
			Pipeline []xpv1.PipelineStep `json:"pipeline"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"pipeline": raw}, &spec); err != nil {
			return nil, fmt.Errorf("cannot read the pipeline of %s %s: %w", ref.kind, name, err)
		}
		rd.pipelines[key] = spec.Pipeline
		return spec.Pipeline, nil
	}
	return nil, errors.New("it names no Composition or CompositionRevision that exists")
}
