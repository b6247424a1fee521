// Package envoy has a real Gateway API implementation judge the Gateways the
// function composes: Envoy Gateway's own translator, run offline through
// `egctl experimental translate` (no cluster, no Envoy, no Docker). A
// Scenario (the composed Gateway, the routes, namespaces and Certificates
// around it) becomes translator input; the translator answers with the
// status Envoy Gateway would write on the Gateway and the routes, and with
// the xDS configuration it would send to Envoy. Helpers turn both into data
// a table-driven test compares with cmp.Diff.
//
// The Makefile builds egctl at the version pinned in
// test/e2e/tools/envoy-gateway and passes its path in EGCTL; without it the
// tests that need the translator skip.
package envoy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	tgwv1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/test/render"
)

// Groups and kinds read from scenario and render files.
const (
	groupGateway     = "gateway.networking.k8s.io"
	groupCertManager = "cert-manager.io"
	groupK8sObject   = "kubernetes.m.crossplane.io"
	groupCozyGateway = "gateway.cozystack.io"

	kindGateway     = "Gateway"
	kindHTTPRoute   = "HTTPRoute"
	kindTLSRoute    = "TLSRoute"
	kindNamespace   = "Namespace"
	kindCertificate = "Certificate"
	kindObject      = "Object"
	kindService     = "Service"
	kindSecret      = "Secret"
	kindClass       = "GatewayClass"
	kindTGW         = "TenantGateway"
)

// labelMetadataName is the label the API server sets on every namespace to
// its name; the function's listener selectors rely on it.
const labelMetadataName = "kubernetes.io/metadata.name"

// ErrNoGateway is returned by LoadScenario when the render composed no
// Gateway: a Tenant scenario, or one whose expected answer is a Fatal result.
var ErrNoGateway = errors.New("the render composed no Gateway")

// A Scenario is what the translator judges: one composed Gateway and the
// cluster around it.
type Scenario struct {
	// Gateway is the composed Gateway, as the function wrote it.
	Gateway gwapiv1.Gateway
	// HTTPRoutes and TLSRoutes are the tenants' routes and the routes the
	// function composed (the http→https redirect).
	HTTPRoutes []gwapiv1.HTTPRoute
	TLSRoutes  []gwapiv1.TLSRoute
	// Namespaces carry the labels the listeners' selectors are evaluated
	// against: the scenario's, after the function's label patches.
	Namespaces []corev1.Namespace
	// Certificates are the composed cert-manager Certificates; the TLS
	// Secret a listener references is made with the DNS names of the one
	// that writes it.
	Certificates []cmv1.Certificate
	// ClassController is the controllerName of the GatewayClass the
	// function observed under the Gateway's class name; empty when it
	// observed none.
	ClassController string
	// TenantGateway is the rendered XR with the status the function
	// wrote (what it says is served, refused, conflicting); nil when the
	// render holds none (hand-written scenarios).
	TenantGateway *tgwv1alpha1.TenantGateway
}

// LoadScenario reads one rendered scenario: dir is its folder under
// examples/ or test/render/scenarios/ (required.yaml and observed.yaml are
// the cluster the function saw) and rendered is the render output
// (<dir>/expected.yaml, or _output/render/<scenario>.yaml after `make
// render`).
func LoadScenario(dir, rendered string) (*Scenario, error) {
	cluster, err := readDocs(filepath.Join(dir, "required.yaml"))
	if err != nil {
		return nil, err
	}
	observed, err := readDocs(filepath.Join(dir, "observed.yaml"))
	if err != nil {
		return nil, err
	}
	composed, err := readDocs(rendered)
	if err != nil {
		return nil, err
	}
	if len(composed) == 0 {
		// A render that stopped at a Fatal result holds only comments.
		return nil, fmt.Errorf("%s holds no objects: %w", rendered, ErrNoGateway)
	}
	return NewScenario(cluster, observed, composed)
}

// readDocs decodes a YAML stream; a missing file holds no objects.
func readDocs(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path) //nolint:gosec // Scenario files are ours.
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	docs, err := render.Documents(b)
	if err != nil {
		return nil, fmt.Errorf("cannot decode %s: %w", path, err)
	}
	return docs, nil
}

// NewScenario builds a Scenario from decoded objects: cluster is what the
// function read (routes, namespaces), observed the composed resources of an
// earlier run, composed the render output. Composed routes replace cluster
// ones of the same name; a composed namespace label patch is applied the
// way provider-kubernetes applies it.
func NewScenario(cluster, observed, composed []map[string]any) (*Scenario, error) {
	s := &Scenario{}
	gateways, err := s.addComposed(composed)
	if err != nil {
		return nil, err
	}
	switch {
	case gateways == 0:
		return nil, ErrNoGateway
	case gateways > 1:
		return nil, fmt.Errorf("cannot judge a render that composed %d Gateways", gateways)
	}
	if s.ClassController, err = classController(cluster, string(s.Gateway.Spec.GatewayClassName)); err != nil {
		return nil, err
	}
	if err := s.addRoutes(cluster, composed); err != nil {
		return nil, err
	}
	if err := s.addNamespaces(cluster, observed, composed); err != nil {
		return nil, err
	}
	return s, nil
}

// addComposed reads the composed Gateway, Certificates and the XR, and
// counts the Gateways.
func (s *Scenario) addComposed(composed []map[string]any) (int, error) {
	gateways := 0
	for _, o := range composed {
		switch groupKind(o) {
		case groupGateway + "/" + kindGateway:
			gateways++
			if err := convert(o, &s.Gateway); err != nil {
				return 0, err
			}
		case groupCertManager + "/" + kindCertificate:
			var c cmv1.Certificate
			if err := convert(o, &c); err != nil {
				return 0, err
			}
			s.Certificates = append(s.Certificates, c)
		case groupCozyGateway + "/" + kindTGW:
			s.TenantGateway = &tgwv1alpha1.TenantGateway{}
			if err := convert(o, s.TenantGateway); err != nil {
				return 0, err
			}
		}
	}
	return gateways, nil
}

// classController is the controllerName of the GatewayClass of that name
// the function read, empty when it read none.
func classController(cluster []map[string]any, name string) (string, error) {
	for _, o := range cluster {
		var gc gwapiv1.GatewayClass
		if groupKind(o) != groupGateway+"/"+kindClass {
			continue
		}
		if err := convert(o, &gc); err != nil {
			return "", err
		}
		if gc.Name == name {
			return string(gc.Spec.ControllerName), nil
		}
	}
	return "", nil
}

// addRoutes collects HTTPRoutes and TLSRoutes, the composed ones last so
// they replace what the cluster held under the same name.
func (s *Scenario) addRoutes(cluster, composed []map[string]any) error {
	http := map[string]gwapiv1.HTTPRoute{}
	tls := map[string]gwapiv1.TLSRoute{}
	for _, o := range append(append([]map[string]any{}, cluster...), composed...) {
		// A route the function writes through an Object (a zone guard)
		// is one the implementation sees.
		if _, m, err := objectManifest(o); err != nil {
			return err
		} else if m != nil {
			o = m
		}
		switch groupKind(o) {
		case groupGateway + "/" + kindHTTPRoute:
			var r gwapiv1.HTTPRoute
			if err := convert(o, &r); err != nil {
				return err
			}
			http[r.Namespace+"/"+r.Name] = r
		case groupGateway + "/" + kindTLSRoute:
			// The translator's file loader reads every TLSRoute as v1 (a
			// v1alpha2 one makes egctl panic); v1alpha2 has the same
			// fields.
			var r gwapiv1.TLSRoute
			if err := convert(o, &r); err != nil {
				return err
			}
			r.APIVersion = gwapiv1.GroupVersion.String()
			tls[r.Namespace+"/"+r.Name] = r
		}
	}
	for _, k := range sortedKeys(http) {
		s.HTTPRoutes = append(s.HTTPRoutes, http[k])
	}
	for _, k := range sortedKeys(tls) {
		s.TLSRoutes = append(s.TLSRoutes, tls[k])
	}
	return nil
}

// addNamespaces collects the cluster's namespaces and applies the label
// patches the function composes as provider-kubernetes Objects. The
// provider applies a manifest server-side, so a label the observed Object
// set and the composed one no longer sets is removed.
func (s *Scenario) addNamespaces(cluster, observed, composed []map[string]any) error {
	byName, err := namespaces(cluster)
	if err != nil {
		return err
	}
	before, err := patchedLabels(observed)
	if err != nil {
		return err
	}
	for _, o := range composed {
		name, m, ok, err := namespacePatch(o)
		if err != nil {
			return err
		}
		ns := byName[m.Name]
		if !ok || ns == nil {
			// provider-kubernetes only updates a namespace that exists.
			continue
		}
		for k := range before[name] {
			if _, set := m.Labels[k]; !set {
				delete(ns.Labels, k)
			}
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		maps.Copy(ns.Labels, m.Labels)
	}
	for _, n := range sortedKeys(byName) {
		s.Namespaces = append(s.Namespaces, *byName[n])
	}
	return nil
}

// namespaces maps the cluster's namespaces by name.
func namespaces(cluster []map[string]any) (map[string]*corev1.Namespace, error) {
	out := map[string]*corev1.Namespace{}
	for _, o := range cluster {
		if groupKind(o) != "/"+kindNamespace {
			continue
		}
		ns := &corev1.Namespace{}
		if err := convert(o, ns); err != nil {
			return nil, err
		}
		out[ns.Name] = ns
	}
	return out, nil
}

// patchedLabels maps each namespace patch Object ("<namespace>/<name>") to
// the labels its manifest sets.
func patchedLabels(objs []map[string]any) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, o := range objs {
		name, m, ok, err := namespacePatch(o)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = m.Labels
		}
	}
	return out, nil
}

// namespacePatch reads a provider-kubernetes Object whose manifest is a
// Namespace: its own namespace/name and the manifest's metadata.
func namespacePatch(o map[string]any) (string, corev1.Namespace, bool, error) {
	var ns corev1.Namespace
	name, m, err := objectManifest(o)
	if err != nil || groupKind(m) != "/"+kindNamespace {
		return "", ns, false, err
	}
	if err := convert(m, &ns); err != nil {
		return "", ns, false, err
	}
	return name, ns, true, nil
}

// objectManifest is the manifest a provider-kubernetes Object writes and
// the Object's "<namespace>/<name>"; nil for any other object.
func objectManifest(o map[string]any) (string, map[string]any, error) {
	if groupKind(o) != groupK8sObject+"/"+kindObject {
		return "", nil, nil
	}
	var obj struct {
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			ForProvider struct {
				Manifest map[string]any `json:"manifest"`
			} `json:"forProvider"`
		}
	}
	if err := convert(o, &obj); err != nil {
		return "", nil, err
	}
	return obj.Metadata.Namespace + "/" + obj.Metadata.Name, obj.Spec.ForProvider.Manifest, nil
}

// groupKind is "<group>/<kind>" of a decoded object ("/<kind>" for core).
func groupKind(o map[string]any) string {
	av, _ := o["apiVersion"].(string)
	k, _ := o["kind"].(string)
	group := ""
	if i := strings.LastIndex(av, "/"); i >= 0 {
		group = av[:i]
	}
	return group + "/" + k
}

// convert decodes a generic object into a typed one through JSON.
func convert(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("cannot encode object: %w", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("cannot decode %s: %w", b, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ciliumController is Cilium's GatewayClass controllerName: for a class of
// it, and only then, the function lists [HTTPRoute, TLSRoute] on every
// port-443 listener (see "Who may attach" in docs/design.md).
const ciliumController = "io.cilium/gateway-controller"

// AsForEnvoyGateway turns the scenario's Gateway into the one the function
// composes for a class that is not Cilium's, and returns the names of the
// listeners it changed. Most scenarios observe a Cilium class, so their
// port-443 listeners carry the [HTTPRoute, TLSRoute] pair, which Envoy
// Gateway refuses on an HTTPS listener (InvalidRouteKinds: nothing
// attaches). The translator moves every Gateway to Envoy Gateway's class,
// and for that class the function lists the kinds each protocol serves:
// HTTPS [HTTPRoute], TLS [TLSRoute] ("Who may attach" in docs/design.md).
// So the judge rewrites those kinds, and only those: it judges the Gateway
// the function would compose for an Envoy Gateway class. A scenario that
// observes a class of another controller is left as composed.
func (s *Scenario) AsForEnvoyGateway() []string {
	if s.ClassController != ciliumController {
		return nil
	}
	var changed []string
	for i := range s.Gateway.Spec.Listeners {
		l := &s.Gateway.Spec.Listeners[i]
		if l.Port != 443 || l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
			continue
		}
		var kind gwapiv1.Kind
		switch l.Protocol {
		case gwapiv1.HTTPSProtocolType:
			kind = kindHTTPRoute
		case gwapiv1.TLSProtocolType:
			kind = kindTLSRoute
		default:
			continue
		}
		group := gwapiv1.Group(groupGateway)
		l.AllowedRoutes.Kinds = []gwapiv1.RouteGroupKind{{Group: &group, Kind: kind}}
		changed = append(changed, string(l.Name))
	}
	return changed
}
