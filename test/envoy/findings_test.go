package envoy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-tenant-gateway/test/render"
)

// contestedUnderChild is a cluster in which an attached platform namespace
// (delegated the apex) and a child tenant both claim a name under the
// child's apex: the child wins it ("Conflicts" in docs/design.md), and its
// wildcard listener (*.foo.example.org) admits only the child, so the
// function makes no pin. The apex's wildcard listener (*.example.org)
// still admits the loser, and Envoy Gateway drops from a listener only
// the route hostnames another listener of the port names exactly: the
// loser keeps a virtual host for the name on the apex's listener.
const contestedUnderChild = `
apiVersion: v1
kind: Namespace
metadata:
  name: tenant-root
  labels: {kubernetes.io/metadata.name: tenant-root, namespace.cozystack.io/gateway: tenant-root, namespace.cozystack.io/host: example.org}
---
apiVersion: v1
kind: Namespace
metadata:
  name: cozy-dashboard
  labels: {kubernetes.io/metadata.name: cozy-dashboard, namespace.cozystack.io/gateway: tenant-root}
---
apiVersion: v1
kind: Namespace
metadata:
  name: tenant-foo
  labels: {kubernetes.io/metadata.name: tenant-foo, namespace.cozystack.io/gateway: tenant-root, namespace.cozystack.io/host: foo.example.org}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: cilium}
spec: {controllerName: io.cilium/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foo, namespace: cozy-dashboard}
spec:
  parentRefs: [{name: cozystack, namespace: tenant-root}]
  hostnames: [a.foo.example.org]
  rules: [{backendRefs: [{name: foo, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: tenant-foo}
spec:
  parentRefs: [{name: cozystack, namespace: tenant-root}]
  hostnames: [a.foo.example.org]
  rules: [{backendRefs: [{name: app, port: 80}]}]
`

// TestFindings renders inputs no golden covers through the real function
// and has the judge look at what it composes: each case is a bug the judge
// found, with the disagreements it causes today. It fails when they
// change: a fixed bug's input then belongs in examples/ as a render
// scenario, which TestExamples judges, and its case here goes.
func TestFindings(t *testing.T) {
	egctl := Egctl(t)
	tools, err := render.ToolsFromEnv()
	if err != nil {
		if os.Getenv("FTG_REQUIRE_RENDER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	root, err := render.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv(render.EnvFunction)
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "function")
		if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "fn", "cmd", "function")).CombinedOutput(); err != nil {
			t.Fatalf("cannot build the function: %v\n%s", err, out)
		}
	}
	var log bytes.Buffer
	fn, err := render.StartFunction(bin, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fn.Stop(); err != nil {
			t.Error(err)
		}
	})

	const xr = `
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata: {name: cozystack, namespace: tenant-root}
spec:
  apex: example.org
  attachedNamespaces: [cozy-dashboard]
`
	cases := map[string]struct {
		reason   string
		xr       string
		required string
		want     []string
	}{
		"EdgeConflictUnderChildApex": {
			reason: "edge: every listener is on port 80, whose one route table then lists a.foo.example.org twice (the loser's on edge, the winner's on edge-child-foo-…). " +
				"Envoy rejects the whole table, so no route of the Gateway is updated; the loser's route is Accepted, not refused as status says.",
			xr: xr + "  certMode: edge\n", required: contestedUnderChild,
			want: []string{
				"Refused HTTPRoute/cozy-dashboard/foo a.foo.example.org",
				"RouteRefused HTTPRoute/cozy-dashboard/foo",
				"RouteTable tenant-root/cozystack/edge",
				"ServedRouting HTTPRoute/tenant-foo/app a.foo.example.org",
				"ServedRouting HTTPRoute/tenant-foo/app a.foo.example.org",
			},
		},
		"DNS01ConflictUnderChildApex": {
			reason: "dns01: each HTTPS listener has its own route table, so a TLS client asking for a.foo.example.org reaches the winner; " +
				"one that came in on the apex's wildcard chain (HTTP/2 connection reuse, which Envoy Gateway turns off here by default because the listeners share a certificate, " +
				"or another SNI on purpose) reaches the loser, whose route is Accepted, not refused as status says.",
			xr: xr + "  certMode: dns01\n  dns01: {cloudflare: {apiTokenSecretRef: {name: cloudflare, key: token}}}\n", required: contestedUnderChild,
			want: []string{
				"Refused HTTPRoute/cozy-dashboard/foo a.foo.example.org",
				"RouteRefused HTTPRoute/cozy-dashboard/foo",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for f, content := range map[string]string{"xr.yaml": tc.xr, "required.yaml": tc.required} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, err := render.Render(context.Background(), tools, root, render.Scenario{Name: name, Dir: dir}, fn.Address)
			if err != nil {
				t.Fatalf("%v\nfunction log:\n%s", err, log.String())
			}
			if err := os.WriteFile(filepath.Join(dir, render.FileExpected), out, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := LoadScenario(dir, filepath.Join(dir, render.FileExpected))
			if err != nil {
				t.Fatal(err)
			}
			s.AsForEnvoyGateway()
			r, err := Translate(context.Background(), egctl, s)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Judge(s, r)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			details := ""
			for _, d := range v.Disagreements {
				got = append(got, d.Check+" "+d.Subject)
				details += d.Error() + "\n"
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\nThe disagreements changed; if the bug is fixed, move this input into examples/ (-want +got):\n%s\n%s", tc.reason, d, details)
			}
		})
	}
}
