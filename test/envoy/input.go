package envoy

import (
	"fmt"
	"iter"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// ControllerName is Envoy Gateway's controller; the translator judges only
// Gateways of a class it controls.
const ControllerName = "gateway.envoyproxy.io/gatewayclass-controller"

// ClassName is the GatewayClass every judged Gateway is moved to.
const ClassName = "envoy-gateway"

// selectsNothing is the selector a listener gets in a translator run whose
// routes it does not admit. The translator's file loader keeps only a
// Namespace's name and drops its labels, and nothing adds the
// kubernetes.io/metadata.name label the API server would: offline every
// namespace has empty labels. So `kubernetes.io/metadata.name In [...]`
// matches no namespace there (tried: the route is refused), any selector
// that requires a label matches none, and `from: All` matches all; a
// listener cannot be made to admit some namespaces and not others. Hence
// the harness evaluates the real selectors itself and runs the translator
// once per group of route namespaces the listeners treat alike, each
// listener admitting the whole group or nothing.
var selectsNothing = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
	Key: "envoy.test.cozystack.io/no-namespace-has-this-label", Operator: metav1.LabelSelectorOpExists,
}}}

// A run is one translator invocation: the routes of the namespaces in it,
// with every listener admitting all of them or none.
type run struct {
	namespaces []string
	input      []byte
}

// runs splits the scenario into translator inputs. Each listener's real
// selector is evaluated with apimachinery's selector code against the
// namespaces' labels; route namespaces that every listener treats alike (all
// admit them or not) share a run, in which a listener admits all of them
// (`from: All`) or none (a selector no label-less namespace matches).
// Listeners whose selector the translator itself would refuse (missing or
// unparsable) are left as they are, for it to judge.
func (s *Scenario) runs(secrets []TLSSecret) ([]run, error) {
	admits, err := s.admittedNamespaces()
	if err != nil {
		return nil, err
	}
	groups := map[string][]string{}
	for _, ns := range sets.List(s.routeNamespaces()) {
		var key strings.Builder
		for _, l := range s.Gateway.Spec.Listeners {
			if a, ok := admits[string(l.Name)]; ok && a.Has(ns) {
				key.WriteByte('1')
			} else {
				key.WriteByte('0')
			}
		}
		groups[key.String()] = append(groups[key.String()], ns)
	}
	if len(groups) == 0 {
		groups[""] = nil
	}
	keys := sortedKeys(groups)
	// The group holding the first namespace goes first, so run order
	// follows namespace names.
	sort.SliceStable(keys, func(i, j int) bool { return first(groups[keys[i]]) < first(groups[keys[j]]) })
	out := make([]run, 0, len(keys))
	for _, k := range keys {
		in, err := s.input(sets.New(groups[k]...), admits, secrets)
		if err != nil {
			return nil, err
		}
		out = append(out, run{namespaces: groups[k], input: in})
	}
	return out, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// admittedNamespaces maps each listener whose namespace policy the harness
// can evaluate to the namespaces it admits.
func (s *Scenario) admittedNamespaces() (map[string]sets.Set[string], error) {
	all := s.namespaceLabels()
	gw := s.Gateway.Namespace
	out := map[string]sets.Set[string]{}
	for _, l := range s.Gateway.Spec.Listeners {
		from := gwapiv1.NamespacesFromSame
		var sel *metav1.LabelSelector
		if l.AllowedRoutes != nil && l.AllowedRoutes.Namespaces != nil {
			if l.AllowedRoutes.Namespaces.From != nil {
				from = *l.AllowedRoutes.Namespaces.From
			}
			sel = l.AllowedRoutes.Namespaces.Selector
		}
		admitted := sets.New[string]()
		switch from {
		case gwapiv1.NamespacesFromAll:
			admitted = sets.KeySet(all)
		case gwapiv1.NamespacesFromSame:
			admitted.Insert(gw)
		case gwapiv1.NamespacesFromSelector:
			if sel == nil {
				continue
			}
			selector, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil {
				// The translator refuses the listener (Programmed=False,
				// Invalid); leave it to say so.
				continue
			}
			for ns, l := range all {
				if selector.Matches(labels.Set(l)) {
					admitted.Insert(ns)
				}
			}
		default:
			return nil, fmt.Errorf("cannot evaluate listener %s: unknown allowedRoutes.namespaces.from %q", l.Name, from)
		}
		out[string(l.Name)] = admitted
	}
	return out, nil
}

// namespaceLabels is every namespace the translator will see, with its
// labels: the scenario's namespaces and those the Gateway and routes live
// in, each with the kubernetes.io/metadata.name label the API server sets.
func (s *Scenario) namespaceLabels() map[string]map[string]string {
	out := map[string]map[string]string{}
	add := func(name string, l map[string]string) {
		m := out[name]
		if m == nil {
			m = map[string]string{labelMetadataName: name}
			out[name] = m
		}
		for k, v := range l {
			m[k] = v
		}
		m[labelMetadataName] = name
	}
	add(s.Gateway.Namespace, nil)
	for _, ns := range s.Namespaces {
		add(ns.Name, ns.Labels)
	}
	for ns := range s.routeNamespaces() {
		add(ns, nil)
	}
	return out
}

func (s *Scenario) routeNamespaces() sets.Set[string] {
	out := sets.New[string]()
	for _, r := range s.HTTPRoutes {
		out.Insert(r.Namespace)
	}
	for _, r := range s.TLSRoutes {
		out.Insert(r.Namespace)
	}
	return out
}

// input is the translator's input for the routes of the namespaces in
// group: the GatewayClass, the Gateway moved to it with every evaluable
// listener admitting the group or nothing, the namespaces, the group's
// routes, a Service for every backend they name and a TLS Secret for every
// certificate the listeners reference.
func (s *Scenario) input(group sets.Set[string], admits map[string]sets.Set[string], secrets []TLSSecret) ([]byte, error) {
	objs := []any{
		map[string]any{
			"apiVersion": gwapiv1.GroupVersion.String(), "kind": "GatewayClass",
			"metadata": map[string]any{"name": ClassName},
			"spec":     map[string]any{"controllerName": ControllerName},
		},
		typed(s.gatewayFor(group, admits), kindGateway),
	}
	nsLabels := s.namespaceLabels()
	for _, name := range sortedKeys(nsLabels) {
		objs = append(objs, map[string]any{
			"apiVersion": "v1", "kind": kindNamespace,
			"metadata": map[string]any{"name": name, "labels": nsLabels[name]},
		})
	}
	for i := range s.HTTPRoutes {
		if r := &s.HTTPRoutes[i]; group.Has(r.Namespace) {
			objs = append(objs, typed(r.DeepCopy(), kindHTTPRoute))
		}
	}
	for i := range s.TLSRoutes {
		if r := &s.TLSRoutes[i]; group.Has(r.Namespace) {
			objs = append(objs, typed(r.DeepCopy(), kindTLSRoute))
		}
	}
	for _, svc := range s.services() {
		objs = append(objs, svc)
	}
	for _, sec := range secrets {
		objs = append(objs, sec.object())
	}
	var out strings.Builder
	for _, o := range objs {
		b, err := clean(o)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return []byte(out.String()), nil
}

// clean encodes an object as translator input: without status (the
// translator's schema check refuses a route whose status lacks parents)
// and with only the metadata it reads.
func clean(o any) ([]byte, error) {
	m := map[string]any{}
	if err := convert(o, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		keep := map[string]any{}
		for _, k := range []string{"name", "namespace", "labels"} {
			if v, ok := md[k]; ok {
				keep[k] = v
			}
		}
		m["metadata"] = keep
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("cannot encode translator input: %w", err)
	}
	return b, nil
}

// gatewayFor is the Gateway moved to the judging class, every evaluable
// listener admitting the whole group (`from: All`) or nothing.
func (s *Scenario) gatewayFor(group sets.Set[string], admits map[string]sets.Set[string]) *gwapiv1.Gateway {
	gw := s.Gateway.DeepCopy()
	gw.Spec.GatewayClassName = ClassName
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		a, ok := admits[string(l.Name)]
		if !ok {
			continue
		}
		if l.AllowedRoutes == nil {
			l.AllowedRoutes = &gwapiv1.AllowedRoutes{}
		}
		from := gwapiv1.NamespacesFromAll
		ns := &gwapiv1.RouteNamespaces{From: &from}
		if !a.IsSuperset(group) {
			from = gwapiv1.NamespacesFromSelector
			ns.Selector = selectsNothing
		}
		l.AllowedRoutes.Namespaces = ns
	}
	return gw
}

// typed sets the apiVersion and kind a Gateway API object must carry in
// the translator's input (decoded objects often lack them).
func typed(o runtime.Object, kind string) runtime.Object {
	o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: gwapiv1.GroupName, Version: gwapiv1.GroupVersion.Version, Kind: kind})
	return o
}

// services makes a Service for every Service a route's backendRef names,
// with every port named and a distinct cluster IP: the xDS translation
// needs one to build endpoints, and the IP tells which Service an
// endpoint is (see Result.Backends).
func (s *Scenario) services() []*corev1.Service {
	ports := map[string]sets.Set[int32]{}
	for routeNS, ref := range s.backendRefs() {
		if !isCore(ref.Group, ref.Kind, kindService) {
			continue
		}
		k := routeNS + "/" + string(ref.Name)
		if ref.Namespace != nil {
			k = string(*ref.Namespace) + "/" + string(ref.Name)
		}
		if ports[k] == nil {
			ports[k] = sets.New[int32]()
		}
		if ref.Port != nil {
			ports[k].Insert(*ref.Port)
		}
	}
	out := make([]*corev1.Service, 0, len(ports))
	for i, k := range sortedKeys(ports) {
		ns, name, _ := strings.Cut(k, "/")
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kindService},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{ClusterIP: clusterIP(i)},
		}
		for _, p := range sets.List(ports[k]) {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: fmt.Sprintf("p%d", p), Port: p, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(p),
			})
		}
		out = append(out, svc)
	}
	return out
}

// backendRefs yields every route's backendRefs with the route's namespace.
func (s *Scenario) backendRefs() iter.Seq2[string, gwapiv1.BackendObjectReference] {
	return func(yield func(string, gwapiv1.BackendObjectReference) bool) {
		for _, r := range s.HTTPRoutes {
			for _, rule := range r.Spec.Rules {
				for _, b := range rule.BackendRefs {
					if !yield(r.Namespace, b.BackendObjectReference) {
						return
					}
				}
			}
		}
		for _, r := range s.TLSRoutes {
			for _, rule := range r.Spec.Rules {
				for _, b := range rule.BackendRefs {
					if !yield(r.Namespace, b.BackendObjectReference) {
						return
					}
				}
			}
		}
	}
}

// isCore says whether a reference's group and kind (both defaulted: core,
// kind) name the core kind.
func isCore(group *gwapiv1.Group, refKind *gwapiv1.Kind, kind string) bool {
	return (group == nil || *group == "") && (refKind == nil || string(*refKind) == kind)
}

// clusterIP is the i-th address of a /16 service range.
func clusterIP(i int) string { return fmt.Sprintf("10.96.%d.%d", (i+1)/256, (i+1)%256) }
