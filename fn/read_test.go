package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// TestReadValues: the structpb readers find a value by its path, say "" or
// nil for what is missing, and name a list that is something else.
func TestReadValues(t *testing.T) {
	s := resource.MustStructJSON(`{"spec":{"name":"a","port":443,"hostnames":["x",7],"none":null,"notList":"x","labels":{"k":"v","n":1}}}`)
	type got struct {
		Str     string
		List    []any
		ListErr string
		Strings map[string]string
	}
	cases := map[string]struct {
		path []string
		want got
	}{
		"String":        {path: []string{"spec", "name"}, want: got{Str: "a", ListErr: "spec.name is not a list", Strings: map[string]string{}}},
		"Number":        {path: []string{"spec", "port"}, want: got{ListErr: "spec.port is not a list", Strings: map[string]string{}}},
		"List":          {path: []string{"spec", "hostnames"}, want: got{List: []any{"x", float64(7)}, Strings: map[string]string{}}},
		"Null":          {path: []string{"spec", "none"}, want: got{Strings: map[string]string{}}},
		"Missing":       {path: []string{"spec", "absent"}, want: got{Strings: map[string]string{}}},
		"BelowAString":  {path: []string{"spec", "name", "deeper"}, want: got{Strings: map[string]string{}}},
		"MissingParent": {path: []string{"status", "name"}, want: got{Strings: map[string]string{}}},
		"NotAList":      {path: []string{"spec", "notList"}, want: got{Str: "x", ListErr: "spec.notList is not a list", Strings: map[string]string{}}},
		"StringMapOnly": {path: []string{"spec", "labels"}, want: got{ListErr: "spec.labels is not a list", Strings: map[string]string{"k": "v"}}},
		"Nested":        {path: []string{"spec", "labels", "k"}, want: got{Str: "v", ListErr: "spec.k is not a list", Strings: map[string]string{}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := got{Str: str(s, tc.path...), Strings: stringMap(valueView(field(s, tc.path...)))}
			l, err := list(s, tc.path...)
			for _, v := range l {
				g.List = append(g.List, v.AsInterface())
			}
			if err != nil {
				g.ListErr = err.Error()
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// TestReadConditions: a conditions list read as statuses, reasons and
// messages by type, and as typed conditions in order.
func TestReadConditions(t *testing.T) {
	v := resource.MustStructJSON(`{"c":[{"type":"Ready","status":"False","reason":"Creating","message":"not yet"},{"type":"Synced","status":"True","reason":"ReconcileSuccess"}]}`).GetFields()["c"]
	readConditions(t, valueView(v))
}

// readConditions checks the readers of a conditions list on v.
func readConditions(t *testing.T, v val) {
	t.Helper()
	if diff := cmp.Diff(map[string]string{"Ready": "False", "Synced": "True"}, conditions(v)); diff != "" {
		t.Errorf("conditions: -want, +got:\n%s", diff)
	}
	o := observedConditions(v)
	if diff := cmp.Diff([]map[string]string{{"Ready": "Creating", "Synced": "ReconcileSuccess"}, {"Ready": "not yet", "Synced": ""}}, []map[string]string{o.Reasons, o.Messages}); diff != "" {
		t.Errorf("observedConditions: -want, +got:\n%s", diff)
	}
	want := []xpv2.Condition{
		{Type: xpv2.TypeReady, Status: "False", Reason: "Creating", Message: "not yet"},
		{Type: xpv2.TypeSynced, Status: "True", Reason: "ReconcileSuccess"},
	}
	if diff := cmp.Diff(want, conditionList(v)); diff != "" {
		t.Errorf("conditionList: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]xpv2.Condition{}, conditionList(val{})); diff != "" {
		t.Errorf("conditionList of nothing: -want, +got:\n%s", diff)
	}
}

// TestObserveComposed: what the edge reads of every composed resource
// Crossplane observed, whatever its kind: its name and conditions, by key.
func TestObserveComposed(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{
		"namespace":     {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tenant-bob"}}`)},
		"tenantgateway": {Resource: resource.MustStructJSON(`{"kind":"Object","status":{"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`)},
	}}}
	want := map[string]*kube.ObservedResource{
		"namespace":     {Name: "tenant-bob", Conditions: map[string]string{}, Reasons: map[string]string{}, Messages: map[string]string{}},
		"tenantgateway": {Conditions: map[string]string{"Ready": "True"}, Reasons: map[string]string{"Ready": "Available"}, Messages: map[string]string{"Ready": ""}},
	}
	if diff := cmp.Diff(want, observeComposed(req)); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}

// TestObserveNamespaces: namespaces by name, sorted; one whose labels are
// not all strings is skipped with a warning naming it and the label.
func TestObserveNamespaces(t *testing.T) {
	req := &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"ns": {Items: []*fnv1.Resource{
		{Resource: resource.MustStructJSON(`{"metadata":{"name":"b","labels":{"k":"v"}}}`)},
		{Resource: resource.MustStructJSON(`{"metadata":{"name":"bad","labels":{"k":1}}}`)},
		{Resource: resource.MustStructJSON(`{"metadata":{"name":"a"}}`)},
	}}}}
	got, warnings := observeNamespaces(req, "ns")
	want := []gateway.Namespace{{Name: "a", Labels: map[string]string{}}, {Name: "b", Labels: map[string]string{"k": "v"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespaces: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{`Namespace "bad": label "k" is not a string`}, warnings); diff != "" {
		t.Errorf("warnings: -want, +got:\n%s", diff)
	}
}

// TestResolved: a run composes only once Crossplane has answered every
// resource and schema it asked for; an empty answer is an answer.
func TestResolved(t *testing.T) {
	asked := &fnv1.RunFunctionResponse{Requirements: &fnv1.Requirements{
		Resources: map[string]*fnv1.ResourceSelector{"platform": byName("v1", "X", "p")},
		Schemas:   map[string]*fnv1.SchemaSelector{"schema": {ApiVersion: "v1", Kind: "X"}},
	}}
	cases := map[string]struct {
		req  *fnv1.RunFunctionRequest
		rsp  *fnv1.RunFunctionResponse
		want bool
	}{
		"NothingAsked":  {req: &fnv1.RunFunctionRequest{}, rsp: &fnv1.RunFunctionResponse{}, want: true},
		"NothingYet":    {req: &fnv1.RunFunctionRequest{}, rsp: asked},
		"ResourcesOnly": {req: &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"platform": {}}}, rsp: asked},
		"All": {
			req:  &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{"platform": {}}, RequiredSchemas: map[string]*fnv1.Schema{"schema": {}}},
			rsp:  asked,
			want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := resolved(tc.req, tc.rsp); got != tc.want {
				t.Errorf("resolved: want %t, got %t", tc.want, got)
			}
		})
	}
}

// TestPlatformData: the data of the platform EnvironmentConfig, and whether
// there is one.
func TestPlatformData(t *testing.T) {
	with := &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{reqPlatform: {Items: []*fnv1.Resource{
		{Resource: resource.MustStructJSON(platformWith(`{"publishing":{"host":"example.org"}}`))},
	}}}}
	data, found := platformData(with)
	if diff := cmp.Diff(map[string]any{"publishing": map[string]any{"host": "example.org"}}, data); diff != "" || !found {
		t.Errorf("found %t, data -want, +got:\n%s", found, diff)
	}
	data, found = platformData(&fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{reqPlatform: {}}})
	if diff := cmp.Diff(map[string]any{}, data); diff != "" || found {
		t.Errorf("none: found %t, data -want, +got:\n%s", found, diff)
	}
}
