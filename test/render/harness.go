// Package render runs `crossplane render` against the function for every
// user example under examples/ and every test scenario under
// test/render/scenarios/, offline: the function is a local process (the
// Development runtime) and the render engine is a local Crossplane core
// binary, so no Docker daemon and no registry are involved. It backs both
// `make render` (cmd/render) and the golden tests (render_test.go).
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Environment variables naming the binaries. The Makefile builds and sets
// them; see `make tools`.
const (
	EnvCrossplane     = "CROSSPLANE"
	EnvCrossplaneCore = "CROSSPLANE_CORE"
	EnvFunction       = "FUNCTION_BIN"
	// RenderClock is the time the function runs at under render, as
	// crossplane render stamps conditions: renders are reproducible.
	RenderClock = "2024-01-01T00:00:00Z"
)

// Paths relative to the repository root.
const (
	// ExamplesDir holds the examples a user copies, one folder per use case
	// with a README.md.
	ExamplesDir = "examples"
	// ScenariosDir holds the scenarios that exist to test: states,
	// refusals, regressions, conflicts.
	ScenariosDir = "test/render/scenarios"
	FunctionsYML = "examples/functions.yaml"
	// SchemasDir holds the OpenAPI documents render answers schema
	// requirements from: a cluster serving the Gateway API v1.6 standard
	// channel, where TLSRoute is v1. A scenario's own schemas/ replaces it.
	SchemasDir = "examples/schemas"
)

// compositions maps an XR kind to the Composition and XRD that ship for it.
var compositions = map[string]struct{ Composition, XRD string }{
	"TenantGateway": {
		Composition: "package/configuration/tenantgateway/composition.yaml",
		XRD:         "package/configuration/tenantgateway/definition.yaml",
	},
	"XTenant": {
		Composition: "package/configuration-tenant/tenant/composition.yaml",
		XRD:         "package/configuration-tenant/tenant/definition.yaml",
	},
}

// Scenario file names.
const (
	fileXR          = "xr.yaml"
	fileComposition = "composition.yaml"
	fileRequired    = "required.yaml"
	fileObserved    = "observed.yaml"
	dirSchemas      = "schemas"
	// FileExpected is the golden output of a scenario.
	FileExpected = "expected.yaml"
)

// Tools are the binaries a render needs.
type Tools struct {
	Crossplane     string
	CrossplaneCore string
}

// ToolsFromEnv reads the binaries' paths from the environment.
func ToolsFromEnv() (Tools, error) {
	t := Tools{Crossplane: os.Getenv(EnvCrossplane), CrossplaneCore: os.Getenv(EnvCrossplaneCore)}
	if t.Crossplane == "" || t.CrossplaneCore == "" {
		return t, fmt.Errorf("%s and %s must name the Crossplane CLI and core binaries (run through `make`, which builds them)", EnvCrossplane, EnvCrossplaneCore)
	}
	return t, nil
}

// RepoRoot finds the repository root above dir (the folder holding go.mod).
func RepoRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("cannot find go.mod above %s", dir)
		}
		d = parent
	}
}

// A Scenario is one folder under examples/ or test/render/scenarios/
// holding an xr.yaml. Names are unique across both.
type Scenario struct {
	Name string
	Dir  string
	// Path is Dir relative to the repository root, for messages.
	Path string
	// Example is true for a user example (examples/), false for a test
	// scenario.
	Example bool
}

// Examples lists the user examples under root/examples, sorted by name.
func Examples(root string) ([]Scenario, error) {
	return list(root, ExamplesDir, true)
}

// Scenarios lists every user example and test scenario, sorted by name,
// and fails when a name is used in both places.
func Scenarios(root string) ([]Scenario, error) {
	ex, err := list(root, ExamplesDir, true)
	if err != nil {
		return nil, err
	}
	sc, err := list(root, ScenariosDir, false)
	if err != nil {
		return nil, err
	}
	out := make([]Scenario, 0, len(ex)+len(sc))
	out = append(append(out, ex...), sc...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("scenario name %q is used by both %s and %s", out[i].Name, out[i-1].Path, out[i].Path)
		}
	}
	return out, nil
}

// Find returns the user example or test scenario of that name.
func Find(root, name string) (Scenario, error) {
	all, err := Scenarios(root)
	if err != nil {
		return Scenario{}, err
	}
	for _, sc := range all {
		if sc.Name == name {
			return sc, nil
		}
	}
	return Scenario{}, fmt.Errorf("no scenario %q under %s or %s", name, ExamplesDir, ScenariosDir)
}

func list(root, rel string, example bool) ([]Scenario, error) {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return nil, fmt.Errorf("cannot list scenarios: %w", err)
	}
	var out []Scenario
	for _, e := range entries {
		dir := filepath.Join(root, rel, e.Name())
		if !e.IsDir() || !exists(filepath.Join(dir, fileXR)) {
			continue
		}
		out = append(out, Scenario{Name: e.Name(), Dir: dir, Path: filepath.ToSlash(filepath.Join(rel, e.Name())), Example: example})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Function is a running function process.
type Function struct {
	Address string
	cmd     *exec.Cmd
	// done is closed when the process has exited; exitErr is then set.
	done    chan struct{}
	exitErr error
}

// StartFunction starts the function binary on a free loopback port with
// --insecure and waits until it accepts connections.
func StartFunction(bin string, log io.Writer) (*Function, error) {
	addr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--insecure", "--debug", "--address="+addr, "--metrics-address=", "--clock="+RenderClock) //nolint:gosec // The binary is ours, built by the Makefile.
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start function %s: %w", bin, err)
	}
	f := &Function{Address: addr, cmd: cmd, done: make(chan struct{})}
	go func() {
		f.exitErr = cmd.Wait()
		close(f.done)
	}()

	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-f.done:
			return nil, fmt.Errorf("function exited before it served: %w", f.exitErr)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return f, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = f.Stop()
	return nil, fmt.Errorf("function did not listen on %s within 30s", addr)
}

// Stop kills the function by its PID and waits for it to exit.
func (f *Function) Stop() error {
	if f == nil || f.cmd.Process == nil {
		return nil
	}
	_ = f.cmd.Process.Kill()
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("function (pid %d) did not exit", f.cmd.Process.Pid)
	}
	return nil
}

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot find a free loopback port: %w", err)
	}
	defer l.Close() //nolint:errcheck // Only its address is needed.
	return l.Addr().String(), nil
}

// Render runs `crossplane render` for one scenario against the function at
// addr and returns its output: the XR (with -x, its spec too), every composed
// resource, and the function's results.
func Render(ctx context.Context, t Tools, root string, sc Scenario, addr string) ([]byte, error) {
	xr := filepath.Join(sc.Dir, fileXR)
	kind, err := kindOf(xr)
	if err != nil {
		return nil, err
	}
	c, ok := compositions[kind]
	if !ok {
		return nil, fmt.Errorf("scenario %s: no Composition ships for kind %q", sc.Name, kind)
	}
	comp := filepath.Join(root, c.Composition)
	if p := filepath.Join(sc.Dir, fileComposition); exists(p) {
		comp = p
	}
	args := []string{
		"render", xr, comp, filepath.Join(root, FunctionsYML),
		"--crossplane-binary=" + t.CrossplaneCore,
		"--xrd=" + filepath.Join(root, c.XRD),
		"--include-function-results",
		"--include-full-xr",
		"--function-annotations=render.crossplane.io/runtime-development-target=" + addr,
	}
	schemas := filepath.Join(root, SchemasDir)
	if p := filepath.Join(sc.Dir, dirSchemas); exists(p) {
		schemas = p
	}
	args = append(args, "--required-schemas="+schemas)
	if p := filepath.Join(sc.Dir, fileRequired); exists(p) {
		args = append(args, "--required-resources="+p)
	}
	if p := filepath.Join(sc.Dir, fileObserved); exists(p) {
		args = append(args, "--observed-resources="+p)
	}
	out, stderr, err := runSplit(ctx, t.Crossplane, args...)
	if err != nil {
		// A Fatal result is the function's answer to bad input, and a
		// scenario may expect it: the golden output is then the error the
		// operator would read. Anything else is a broken render.
		if i := bytes.Index(stderr, []byte("returned a fatal result: ")); i >= 0 {
			msg := bytes.TrimSpace(stderr[i+len("returned a fatal result: "):])
			if j := bytes.IndexByte(msg, '\n'); j >= 0 {
				msg = msg[:j]
			}
			return append(append([]byte("# crossplane render stopped: the function returned a Fatal result\n# "), msg...), '\n'), nil
		}
		return nil, fmt.Errorf("%w\n%s%s", err, out, stderr)
	}
	return sortUnreadyResults(out), nil
}

// sortUnreadyResults sorts the "Composed resource %q is not yet ready"
// results the render engine appends. Crossplane emits them while ranging over
// a map, so their order changes from run to run; everything the function
// itself returns keeps its order.
func sortUnreadyResults(out []byte) []byte {
	trailing := len(out) - len(trimEnd(out))
	docs := bytes.Split(trimEnd(out), []byte("\n---\n"))
	isUnready := func(d []byte) bool {
		return bytes.Contains(d, []byte("kind: Result\n")) && bytes.Contains(d, []byte("message: Composed resource \"")) && bytes.Contains(d, []byte("is not yet ready"))
	}
	for i := 0; i < len(docs); {
		if !isUnready(docs[i]) {
			i++
			continue
		}
		j := i
		for j < len(docs) && isUnready(docs[j]) {
			j++
		}
		run := docs[i:j]
		sort.SliceStable(run, func(a, b int) bool { return bytes.Compare(run[a], run[b]) < 0 })
		i = j
	}
	return append(bytes.Join(docs, []byte("\n---\n")), out[len(out)-trailing:]...)
}

// trimEnd drops the newlines that end a stream.
func trimEnd(b []byte) []byte { return bytes.TrimRight(b, "\n") }

// SchemaDir fills dir with every schema the rendered objects are validated
// against: the Gateway API standard-channel, cert-manager and
// provider-kubernetes CRDs from the Go module cache (the versions go.mod
// pins) and our own XRDs.
func SchemaDir(ctx context.Context, root, dir string) error {
	files, err := schemaFiles(ctx, root)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // Paths come from the module cache and the repository.
		if err != nil {
			return fmt.Errorf("cannot read schema %s: %w", f, err)
		}
		// Our XRDs share a file name; the folder tells them apart.
		dst := filepath.Join(dir, filepath.Base(filepath.Dir(f))+"-"+filepath.Base(f))
		if err := os.WriteFile(dst, b, 0o600); err != nil { //nolint:gosec // dir is the caller's temporary directory.
			return fmt.Errorf("cannot write schema %s: %w", dst, err)
		}
	}
	return nil
}

// schemaFiles lists the CRD and XRD files SchemaDir copies.
func schemaFiles(ctx context.Context, root string) ([]string, error) {
	mods := []string{"sigs.k8s.io/gateway-api", "github.com/cert-manager/cert-manager", "github.com/crossplane-contrib/provider-kubernetes"}
	if _, err := run(ctx, "go", append([]string{"-C", root, "mod", "download"}, mods...)...); err != nil {
		return nil, err
	}
	out, err := run(ctx, "go", append([]string{"-C", root, "list", "-m", "-f", "{{.Dir}}"}, mods...)...)
	if err != nil {
		return nil, err
	}
	dirs := strings.Fields(string(out))
	if len(dirs) != len(mods) {
		return nil, fmt.Errorf("cannot find the modules %v: go list printed %q", mods, out)
	}
	gw, err := filepath.Glob(filepath.Join(dirs[0], "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	if err != nil {
		return nil, err
	}
	cm, err := filepath.Glob(filepath.Join(dirs[1], "deploy", "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(gw) == 0 || len(cm) == 0 {
		return nil, fmt.Errorf("no CRDs found under %s and %s", dirs[0], dirs[1])
	}
	var files []string
	for _, f := range gw {
		// Not a CRD: a ValidatingAdmissionPolicy guarding upgrades.
		if !strings.HasSuffix(f, "_vap_safeupgrades.yaml") {
			files = append(files, f)
		}
	}
	files = append(files, cm...)
	// provider-kubernetes Objects: namespaced ones patch namespace labels,
	// cluster-scoped ones carry what a Tenant composes.
	files = append(files,
		filepath.Join(dirs[2], "package", "crds", "kubernetes.m.crossplane.io_objects.yaml"),
		filepath.Join(dirs[2], "package", "crds", "kubernetes.crossplane.io_objects.yaml"))
	for _, c := range compositions {
		files = append(files, filepath.Join(root, c.XRD))
	}
	sort.Strings(files)
	return files, nil
}

// Validate checks every Kubernetes object in rendered output against the
// schemas in dir with `crossplane resource validate`, offline. The
// render-only documents (results, context) are left out, and a missing
// schema is an error, so every composed object is really checked.
func Validate(ctx context.Context, t Tools, schemas string, rendered []byte, cacheDir string) ([]byte, error) {
	objs, err := KubernetesObjects(rendered)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "rendered-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name()) //nolint:errcheck // Best-effort clean-up of a temp file.
	if _, err := f.Write(objs); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return run(ctx, t.Crossplane, "resource", "validate", schemas, f.Name(),
		"--crossplane-image=", "--cache-dir="+cacheDir, "--error-on-missing-schemas")
}

// KubernetesObjects drops the render.crossplane.io documents (Result,
// Context) from rendered output, and core kinds (apiVersion v1, such as a
// tenant's Namespace), which have no CRD to validate against offline; the
// end-to-end tests apply them to a real API server.
func KubernetesObjects(rendered []byte) ([]byte, error) {
	docs, err := Documents(rendered)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, d := range docs {
		if av := apiVersionOf(d); strings.HasPrefix(av, "render.crossplane.io/") || av == "v1" {
			continue
		}
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes(), nil
}

// Documents splits a YAML stream into objects.
func Documents(stream []byte) ([]map[string]any, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var out []map[string]any
	for {
		m := map[string]any{}
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("cannot decode rendered YAML: %w", err)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
}

func apiVersionOf(m map[string]any) string {
	s, _ := m["apiVersion"].(string)
	return s
}

func kindOf(file string) (string, error) {
	b, err := os.ReadFile(file) //nolint:gosec // Scenario files are ours.
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", file, err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("cannot decode %s: %w", file, err)
	}
	k, _ := m["kind"].(string)
	return k, nil
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, stderr, err := runSplit(ctx, name, args...)
	if err != nil {
		return out, fmt.Errorf("%w\n%s%s", err, out, stderr)
	}
	return out, nil
}

// runSplit runs a command and returns its stdout and stderr apart.
func runSplit(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...) //nolint:gosec // Our own tools, with our own arguments.
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return stdout.Bytes(), stderr.Bytes(), nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
