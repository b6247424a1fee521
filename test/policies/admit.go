package policies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// What other test packages (test/envoy's attacks) use to put a write
// through the shipped admission policies the way the API server does,
// without one: the attacker's route is created only if every policy that
// matches it admits it.

// Set is the shipped policies and their bindings, by policy name.
type Set struct {
	Policies map[string]*admissionv1.ValidatingAdmissionPolicy
	Bindings map[string]*admissionv1.ValidatingAdmissionPolicyBinding
}

// Load decodes examples/cluster/admission-policies.yaml under the
// repository root, refusing unknown fields so a misspelt policy field fails
// here rather than being dropped by the API server.
func Load(root string) (*Set, error) {
	path := filepath.Join(root, "examples", "cluster", "admission-policies.yaml")
	b, err := os.ReadFile(path) //nolint:gosec // The repository's own file.
	if err != nil {
		return nil, fmt.Errorf("cannot read the admission policies: %w", err)
	}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	s := &Set{Policies: map[string]*admissionv1.ValidatingAdmissionPolicy{}, Bindings: map[string]*admissionv1.ValidatingAdmissionPolicyBinding{}}
	for {
		raw := map[string]any{}
		if err := d.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return s, nil
			}
			return nil, fmt.Errorf("cannot decode %s: %w", path, err)
		}
		j, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("cannot encode %v: %w", raw["kind"], err)
		}
		switch raw["kind"] {
		case "ValidatingAdmissionPolicy":
			p := &admissionv1.ValidatingAdmissionPolicy{}
			if err := jsonStrict(j, p); err != nil {
				return nil, fmt.Errorf("policy does not decode: %w", err)
			}
			s.Policies[p.Name] = p
		case "ValidatingAdmissionPolicyBinding":
			bd := &admissionv1.ValidatingAdmissionPolicyBinding{}
			if err := jsonStrict(j, bd); err != nil {
				return nil, fmt.Errorf("binding does not decode: %w", err)
			}
			s.Bindings[bd.Spec.PolicyName] = bd
		}
	}
}

// jsonStrict decodes refusing unknown fields.
func jsonStrict(b []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(into)
}

// SettingName is the EnvironmentConfig of trusted callers.
const SettingName = "tenant-gateway-trusted-callers"

// Setting is examples/cluster/trusted-callers.yaml as the policies see it
// (their params).
func Setting(root string) (map[string]any, error) {
	path := filepath.Join(root, "examples", "cluster", "trusted-callers.yaml")
	b, err := os.ReadFile(path) //nolint:gosec // The repository's own file.
	if err != nil {
		return nil, fmt.Errorf("cannot read the trusted callers: %w", err)
	}
	ec := map[string]any{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096).Decode(&ec); err != nil {
		return nil, fmt.Errorf("cannot decode %s: %w", path, err)
	}
	if md, _ := ec["metadata"].(map[string]any); ec["kind"] != "EnvironmentConfig" || md["name"] != SettingName {
		return nil, fmt.Errorf("%s holds %v %v, want the EnvironmentConfig %s", path, ec["kind"], md["name"], SettingName)
	}
	return ec, nil
}

var env = func() *cel.Env {
	e, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType),
		cel.Variable("params", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)),
	)
	if err != nil {
		panic(err)
	}
	return e
}()

// Eval evaluates one CEL expression of a policy with the variables the API
// server gives it.
func Eval(expr string, vars map[string]any) (any, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%q does not compile: %w", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("cannot plan %q: %w", expr, err)
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("cannot evaluate %q: %w", expr, err)
	}
	return out.Value(), nil
}

// NoParams is what the API server answers when a binding's parameter does
// not exist and its parameterNotFoundAction is Deny.
const NoParams = "no params found for policy binding with `Deny` parameterNotFoundAction"

// NotMatched is what Admit returns when a match condition leaves the
// request out.
const NotMatched = "not matched"

// Admit runs a policy the way the API server does: its parameter, then
// match conditions, then variables in order, then validations; it returns
// the first failing validation's message, "" when admitted, NotMatched, or
// NoParams when the policy reads a parameter and in has none. in holds
// object, oldObject, request, namespaceObject and params; Admit sets its
// variables.
func Admit(p *admissionv1.ValidatingAdmissionPolicy, in map[string]any) (string, error) {
	if p.Spec.ParamKind != nil && in["params"] == nil {
		return NoParams, nil
	}
	for _, m := range p.Spec.MatchConditions {
		v, err := Eval(m.Expression, in)
		if err != nil {
			return "", fmt.Errorf("policy %s: %w", p.Name, err)
		}
		if v != true {
			return NotMatched, nil
		}
	}
	vars := map[string]any{}
	in["variables"] = vars
	for _, v := range p.Spec.Variables {
		x, err := Eval(v.Expression, in)
		if err != nil {
			return "", fmt.Errorf("policy %s: %w", p.Name, err)
		}
		vars[v.Name] = x
	}
	for _, v := range p.Spec.Validations {
		x, err := Eval(v.Expression, in)
		if err != nil {
			return "", fmt.Errorf("policy %s: %w", p.Name, err)
		}
		if x != true {
			return v.Message, nil
		}
	}
	return "", nil
}

// Matches is the API server's rule match: every list holds the value or
// "*"; a resource rule "r/*" matches every subresource of r, "*/s" the
// subresource s of every resource.
func Matches(p *admissionv1.ValidatingAdmissionPolicy, group, version, resource, op string) bool {
	in := func(l []string, v string) bool { return slices.Contains(l, v) || slices.Contains(l, "*") }
	for _, rule := range p.Spec.MatchConstraints.ResourceRules {
		ops := make([]string, 0, len(rule.Operations))
		for _, o := range rule.Operations {
			ops = append(ops, string(o))
		}
		if in(rule.APIGroups, group) && in(rule.APIVersions, version) && in(ops, op) && resourceMatches(rule.Resources, resource) {
			return true
		}
	}
	return false
}

// resourceMatches is a rule's resources matching resource, which may name a
// subresource ("r/s").
func resourceMatches(rules []string, resource string) bool {
	r, sub, _ := strings.Cut(resource, "/")
	if sub == "" {
		return slices.Contains(rules, resource) || slices.Contains(rules, "*")
	}
	return slices.Contains(rules, resource) || slices.Contains(rules, r+"/*") || slices.Contains(rules, "*/"+sub) || slices.Contains(rules, "*/*")
}

// Review puts a write of resource (group, version) through every policy of
// the set that matches it, in name order, as the API server would with the
// shipped setting as params; it returns the first refusal as
// "<policy>: <message>", "" when every policy admits it.
func (s *Set) Review(group, version, resource string, in map[string]any) (string, error) {
	req, _ := in["request"].(map[string]any)
	op, _ := req["operation"].(string)
	names := make([]string, 0, len(s.Policies))
	for name := range s.Policies {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := s.Policies[name]
		if !Matches(p, group, version, resource, op) {
			continue
		}
		msg, err := Admit(p, in)
		if err != nil {
			return "", err
		}
		if msg != "" && msg != NotMatched {
			return name + ": " + msg, nil
		}
	}
	return "", nil
}
