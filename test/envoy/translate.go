package envoy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// EnvEgctl names the egctl binary; the Makefile builds it and sets it for
// `make test`.
const EnvEgctl = "EGCTL"

// Egctl returns the egctl binary named by EGCTL and skips the test when it
// is not set.
func Egctl(t testing.TB) string {
	t.Helper()
	p := os.Getenv(EnvEgctl)
	if p == "" {
		t.Skipf("%s is not set: these tests run Envoy Gateway's translator (egctl), which `make test` builds and passes", EnvEgctl)
	}
	return p
}

// A Result is the translator's judgement of a Scenario.
type Result struct {
	// Gateway has the composed spec and the status Envoy Gateway would
	// write.
	Gateway gwapiv1.Gateway
	// HTTPRoutes and TLSRoutes have the status Envoy Gateway would write.
	HTTPRoutes []gwapiv1.HTTPRoute
	TLSRoutes  []gwapiv1.TLSRoute
	// XDS is the Envoy configuration it would send, merged over the runs.
	XDS XDS
	// Secrets are the TLS Secrets the harness made for the listeners.
	Secrets []TLSSecret
	// Runs are the translator invocations: the route namespaces each
	// judged and its input, for a failing test to show.
	Runs []Run
	// services maps a cluster IP to the Service the harness gave it.
	services map[string]string
}

// A Run is one translator invocation.
type Run struct {
	Namespaces []string
	Input      []byte
}

// The part of the translator's output decoded: Gateway API objects with
// status, and one xDS config dump per Gateway ("<namespace>/<name>").
type translated struct {
	Gateways   []gwapiv1.Gateway          `json:"gateways"`
	HTTPRoutes []gwapiv1.HTTPRoute        `json:"httpRoutes"`
	TLSRoutes  []gwapiv1.TLSRoute         `json:"tlsRoutes"`
	XDS        map[string]json.RawMessage `json:"xds"`
}

// Args are egctl's arguments for one translation of file: Envoy Gateway's
// Gateway API translator (status) and its xDS translator (Envoy
// configuration) in one invocation, everything as JSON. egctl runs the two
// translations independently; their output equals that of `--to
// gateway-api` and `--to xds` run apart, at half the start-up cost.
func Args(file string) []string {
	return []string{"experimental", "translate", "--from", "gateway-api", "--to", "gateway-api,xds", "--type", "all", "--output", "json", "--file", file}
}

// Translate has Envoy Gateway's translator judge the scenario: once per
// group of route namespaces the listeners admit alike (see runs), merged.
func Translate(ctx context.Context, egctl string, s *Scenario) (*Result, error) {
	secrets, err := s.secrets()
	if err != nil {
		return nil, err
	}
	runs, err := s.runs(secrets)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "envoy-translate-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a directory for translator input: %w", err)
	}
	defer os.RemoveAll(dir) //nolint:errcheck // Best-effort clean-up of a temp dir.

	res := &Result{Secrets: secrets, services: map[string]string{}}
	for _, svc := range s.services() {
		res.services[svc.Spec.ClusterIP] = svc.Namespace + "/" + svc.Name
	}
	for i, r := range runs {
		res.Runs = append(res.Runs, Run{Namespaces: r.namespaces, Input: r.input})
		file := filepath.Join(dir, fmt.Sprintf("run-%d.yaml", i))
		if err := os.WriteFile(file, r.input, 0o600); err != nil {
			return nil, fmt.Errorf("cannot write translator input: %w", err)
		}
		out, err := egctlRun(ctx, egctl, Args(file)...)
		if err != nil {
			return nil, fmt.Errorf("cannot translate the routes of %v: %w", r.namespaces, err)
		}
		var tr translated
		if err := json.Unmarshal(out, &tr); err != nil {
			return nil, fmt.Errorf("cannot decode the translator's output: %w", err)
		}
		if err := res.add(s, r, tr); err != nil {
			return nil, err
		}
	}
	res.Gateway.Spec = *s.Gateway.Spec.DeepCopy()
	return res, nil
}

func egctlRun(ctx context.Context, egctl string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, egctl, args...) //nolint:gosec // The binary is ours, built by the Makefile.
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("egctl %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// add merges one run's output. The Gateway's conditions and every
// listener's must come out the same in every run (they do not depend on
// routes); attached routes add up. A route's status comes from the run
// that held it.
func (res *Result) add(s *Scenario, r run, tr translated) error {
	key := s.Gateway.Namespace + "/" + s.Gateway.Name
	i := slices.IndexFunc(tr.Gateways, func(g gwapiv1.Gateway) bool { return g.Namespace+"/"+g.Name == key })
	if i < 0 {
		return fmt.Errorf("the translator's output has no Gateway %s", key)
	}
	gw := tr.Gateways[i]
	if len(res.Runs) == 1 {
		res.Gateway = gw
	} else {
		ignore := []cmp.Option{
			cmpopts.IgnoreFields(gwapiv1.ListenerStatus{}, "AttachedRoutes"),
			cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
		}
		if d := cmp.Diff(res.Gateway.Status, gw.Status, ignore...); d != "" {
			return fmt.Errorf("the Gateway's status depends on which routes are translated (%v, then %v), so the per-namespace runs cannot be merged (-first +later):\n%s",
				res.Runs[0].Namespaces, r.namespaces, d)
		}
		for j := range res.Gateway.Status.Listeners {
			res.Gateway.Status.Listeners[j].AttachedRoutes += gw.Status.Listeners[j].AttachedRoutes
		}
	}
	for _, h := range tr.HTTPRoutes {
		if slices.Contains(r.namespaces, h.Namespace) {
			res.HTTPRoutes = append(res.HTTPRoutes, h)
		}
	}
	for _, t := range tr.TLSRoutes {
		if slices.Contains(r.namespaces, t.Namespace) {
			res.TLSRoutes = append(res.TLSRoutes, t)
		}
	}
	raw, ok := tr.XDS[key]
	if !ok {
		// No xDS at all: the translator made no Envoy configuration for
		// this Gateway (not accepted, no valid listener).
		return nil
	}
	x, err := parseXDS(raw)
	if err != nil {
		return err
	}
	res.XDS.merge(x)
	return nil
}
