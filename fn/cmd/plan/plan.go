package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	xpv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"

	appsv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/apps/v1alpha1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn"
	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// options are the plan's flags.
type options struct {
	Kubeconfig string
	// Settings names a file holding the proposed platform settings (an
	// EnvironmentConfig), planned in place of the live one of its name.
	Settings string
	// Function is the name of the installed Function whose pipeline step
	// the plan runs this build in place of.
	Function string
	JSON     bool
	// MaxChanges bounds the changes the summary lists per composite
	// resource; the JSON output lists up to maxJSONChanges.
	MaxChanges int
	// MaxXRs bounds the composite resources the summary lists.
	MaxXRs int
}

func defaultOptions() options {
	return options{Function: "cozystack-function-tenant-gateway", MaxChanges: 20, MaxXRs: 100}
}

// The kinds the summary counts.
var (
	kindTenantGateway = v1alpha1.TenantGatewayGroupVersionKind.Kind
	kindXTenant       = appsv1alpha1.XTenantGroupVersionKind.Kind
)

// maxJSONChanges bounds the changes the JSON output lists per composite
// resource: a renaming release changes every listener of every Gateway.
const maxJSONChanges = 1000

// xrPlan is what the new build would change on one composite resource.
type xrPlan struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Claim is namespace/name of an XTenant's Tenant.
	Claim   string   `json:"claim,omitempty"`
	Changes []change `json:"changes"`
	// LeftOut counts the changes left out of Changes.
	LeftOut int `json:"leftOut,omitempty"`
	// Served is whether any change is to what is served.
	Served bool `json:"served"`
	// Error says why the composite resource could not be planned.
	Error string `json:"error,omitempty"`
}

func (x xrPlan) id() string {
	s := x.Kind + " "
	if x.Namespace != "" {
		s += x.Namespace + "/"
	}
	s += x.Name
	if x.Claim != "" {
		s += " (Tenant " + x.Claim + ")"
	}
	return s
}

// result is a plan of the whole platform.
type result struct {
	// Planned counts the composite resources planned, by kind.
	Planned map[string]int `json:"planned"`
	// XRs are those with a change or an error, in order.
	XRs []xrPlan `json:"xrs"`
	// Served is whether anything served would change.
	Served bool `json:"served"`
	// Errors counts the composite resources that could not be planned.
	Errors int `json:"errors"`
}

// planner runs this build's function on what Crossplane would hand it.
type planner struct {
	r        *live.Reader
	function live.Runner
	read     *reader
}

func newPlanner(r *live.Reader, o options) *planner {
	return &planner{r: r, function: fn.NewFunction(), read: &reader{r: r, function: o.Function, pipelines: map[string][]xpv1.PipelineStep{}}}
}

// plan runs the function on every composite resource it composes.
func (p *planner) plan(ctx context.Context) (*result, error) {
	xrs, err := p.read.xrs(ctx)
	if err != nil {
		return nil, err
	}
	res := &result{Planned: map[string]int{}, XRs: []xrPlan{}}
	for _, xr := range xrs {
		res.Planned[xr.GetKind()]++
		x := p.planOne(ctx, xr)
		if len(x.Changes) == 0 && x.Error == "" {
			continue
		}
		if x.Error != "" {
			res.Errors++
		}
		res.Served = res.Served || x.Served
		res.XRs = append(res.XRs, x)
	}
	return res, nil
}

// planOne runs one reconcile of xr's step, as Crossplane would, and
// compares its desired state with what is live.
func (p *planner) planOne(ctx context.Context, xr *unstructured.Unstructured) xrPlan {
	x := xrPlan{Kind: xr.GetKind(), Namespace: xr.GetNamespace(), Name: xr.GetName()}
	if l := xr.GetLabels(); l["crossplane.io/claim-name"] != "" {
		x.Claim = l["crossplane.io/claim-namespace"] + "/" + l["crossplane.io/claim-name"]
	}
	st, err := p.read.step(ctx, xr)
	if err != nil {
		x.Error = fmt.Sprintf("cannot plan: %v", err)
		return x
	}
	req, rsp, _, err := live.Reconcile(ctx, p.r, p.function, st.req, st.bootstrap, nil)
	if err != nil {
		x.Error = fmt.Sprintf("cannot run the function: %v", err)
		return x
	}
	changes := diff(req, rsp)
	for _, c := range changes {
		x.Served = x.Served || c.Served
	}
	if len(changes) > maxJSONChanges {
		x.LeftOut = len(changes) - maxJSONChanges
		changes = changes[:maxJSONChanges]
	}
	x.Changes = changes
	return x
}

// readSettings reads proposed platform settings: an EnvironmentConfig.
func readSettings(path string) (*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path) //nolint:gosec // The operator names the file to read.
	if err != nil {
		return nil, fmt.Errorf("cannot read the platform settings file: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		return nil, fmt.Errorf("cannot parse the platform settings file %s: %w", path, err)
	}
	if u.GetKind() != "EnvironmentConfig" || u.GetName() == "" || u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("the platform settings file %s holds no EnvironmentConfig with a name (apiVersion %q, kind %q, name %q)", path, u.GetAPIVersion(), u.GetKind(), u.GetName())
	}
	return u, nil
}

// print writes the plan: a summary, or JSON.
func (r *result) print(w io.Writer, o options) error {
	if o.JSON {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		if err := e.Encode(r); err != nil {
			return fmt.Errorf("cannot write the plan: %w", err)
		}
		return nil
	}
	var out []byte
	for i, x := range r.XRs {
		if i == o.MaxXRs {
			out = fmt.Appendf(out, "… and %d more composite resources change (--json lists them all)\n", len(r.XRs)-i)
			break
		}
		switch {
		case x.Error != "":
			out = fmt.Appendf(out, "%s: %s\n", x.id(), x.Error)
			continue
		case x.Served:
			out = fmt.Appendf(out, "%s: %s, to what it serves\n", x.id(), count(len(x.Changes)+x.LeftOut, "change"))
		default:
			out = fmt.Appendf(out, "%s: %s, to its status only\n", x.id(), count(len(x.Changes)+x.LeftOut, "change"))
		}
		for j, c := range x.Changes {
			if j == o.MaxChanges {
				out = fmt.Appendf(out, "  … and %d more (--json lists them)\n", len(x.Changes)+x.LeftOut-j)
				break
			}
			out = fmt.Appendf(out, "  %s\n", c)
		}
	}
	verdict := "nothing served would change"
	switch {
	case r.Errors > 0:
		verdict = fmt.Sprintf("%s could not be planned (exit 1)", count(r.Errors, "composite resource"))
	case r.Served:
		verdict = "what is served would change (exit 2)"
	}
	out = fmt.Appendf(out, "plan: %s and %s planned, %d would change: %s\n", count(r.Planned[kindTenantGateway], kindTenantGateway), count(r.Planned[kindXTenant], kindXTenant), len(r.XRs)-r.Errors, verdict)
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("cannot write the plan: %w", err)
	}
	return nil
}

// planAndPrint plans the platform r reads, with the proposed settings
// when there are, writes the plan, and returns errChanges when anything
// served would change.
func planAndPrint(ctx context.Context, r *live.Reader, o options, settings *unstructured.Unstructured, w io.Writer) error {
	if settings != nil {
		if err := r.Override(settings); err != nil {
			return err
		}
	}
	res, err := newPlanner(r, o).plan(ctx)
	if err != nil {
		return err
	}
	if err := res.print(w, o); err != nil {
		return err
	}
	switch {
	case res.Errors > 0:
		return fmt.Errorf("cannot plan %s (listed above)", count(res.Errors, "composite resource"))
	case res.Served:
		return errChanges
	}
	return nil
}

// count is n things, in the plural unless one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
