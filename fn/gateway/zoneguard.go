package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// A zone guard keeps a child apex's zone its own in a shared route table
// (see Zone guards in docs/design.md). Envoy picks a virtual host by the
// exact domain, then the longest wildcard suffix: on an edge Gateway every
// listener is on port 80 and shares one table, so a name of the child's zone
// that the child does not route itself would fall through to the parent's
// *.<parent apex> (a wildcard route of the parent's, or one without
// hostnames) and be answered by the parent. The guard is an HTTPRoute in the
// child's namespace, attached only to the child's listener, that lists
// *.<child apex> in the table; its one rule matches only ZoneGuardPath, so
// any other name of the zone finds the child's own domains or none (404),
// as a per-SNI listener would answer, and a child's own *.<child apex> route
// shares the virtual host without being shadowed.

// ZoneGuardPath is the only path a zone guard's rule matches: a request for
// it gets the implementation's answer for a rule without backends (500 on
// Envoy Gateway), every other path of the zone no rule of the guard's.
const ZoneGuardPath = "/.well-known/tenant-gateway/zone-guard"

const keyZoneGuardPrefix = "zone-guard-"

// ZoneGuardKey is the composition resource name of a child apex's guard:
// zone-guard-<label>-<hex8>, unless another apex of the Gateway derives the
// same (see zoneGuardKeys).
func ZoneGuardKey(apex string) string { return keyZoneGuardPrefix + HostKey(apex) }

// fullZoneGuardKey is zone-guard-<apex>: the whole apex, so no two apexes
// share it, and never a short key (an apex has a dot, a short key none).
func fullZoneGuardKey(apex string) string { return keyZoneGuardPrefix + apex }

// zoneGuardKeys gives each guard (apex → its Object's name) a key no other
// guard has, as listener names are given (see Names in docs/design.md): the
// 32-bit short key unless another apex derives the same. Then the guard
// Crossplane observes under the short key (by its Object's name) keeps it,
// else the byte-smaller apex, and the others take the full key; a guard
// observed under its full key keeps it, so that its Object is never handed
// from one key to another.
func zoneGuardKeys(in *Input, guards map[string]string) map[string]string {
	apexes := slices.Sorted(maps.Keys(guards))
	keys := make(map[string]string, len(apexes))
	groups := map[string][]string{}
	for _, a := range apexes {
		if o := in.Observed[fullZoneGuardKey(a)]; o != nil && o.Name == guards[a] {
			keys[a] = fullZoneGuardKey(a)
			continue
		}
		groups[ZoneGuardKey(a)] = append(groups[ZoneGuardKey(a)], a)
	}
	for short, g := range groups {
		keeper := g[0]
		if o := in.Observed[short]; o != nil {
			if i := slices.IndexFunc(g, func(a string) bool { return o.Name == guards[a] }); i >= 0 {
				keeper = g[i]
			}
		}
		for _, a := range g {
			keys[a] = fullZoneGuardKey(a)
		}
		keys[keeper] = short
	}
	return keys
}

func isZoneGuardKey(key string) bool { return strings.HasPrefix(key, keyZoneGuardPrefix) }

// ZoneGuardName is the HTTPRoute a guard is, in the child's namespace:
// <tgw>-zone-guard. The name is reserved there (as a route report's is).
func ZoneGuardName(tgw string) string { return tgw + "-zone-guard" }

// ZoneGuardObjectName is the Object that writes a guard, in the owner's
// namespace: <tgw>-zg-<ns>-<hex8 of tgw/ns>, or <hex16>-zone-guard over the
// limit of an object name (as NamespaceObjectName).
func ZoneGuardObjectName(tgw, ns string) string { return writerName(tgw, ns, "zg", "zone-guard") }

// zoneGuards composes a guard for every child apex whose listener is on the
// Gateway, in every wildcard mode: edge Gateways share one table, and so do
// implementations that share one across a port's HTTPS listeners (Cilium);
// per SNI (Envoy's HTTPS listeners) the guard changes nothing but the one
// path it matches. The guard goes to the first namespace of the apex (by
// name) that the listener still admits: a namespace kept off it (see
// Conflicts in docs/design.md) could not attach one. A zone whose every
// namespace is kept off gets none (a known limit, see Zone guards).
//
//nolint:gocyclo // One step per guard form (zone, exposed apex, key collision), read in order.
func zoneGuards(in *Input, t *tenancy, children []*child) ([]kube.Resource, error) {
	if in.Spec.CertMode == v1alpha1.CertModeHTTP01 {
		return nil, nil
	}
	byApex := map[string][]string{}
	for _, n := range in.Namespaces {
		if a := t.host(n.Name); a != "" && n.Name != in.Namespace && t.admitted(n.Name) {
			byApex[a] = append(byApex[a], n.Name)
		}
	}
	var guarded []*child
	guardNS := map[string]string{}
	objects := map[string]string{}
	for _, ch := range children {
		if ch.slot == nil || !ch.slot.kept || ch.slot.name == "" {
			continue
		}
		i := slices.IndexFunc(byApex[ch.apex], func(ns string) bool { return ch.slot.admit.admits(t, ns) })
		if i < 0 {
			continue
		}
		guarded = append(guarded, ch)
		guardNS[ch.apex] = byApex[ch.apex][i]
		objects[ch.apex] = ZoneGuardObjectName(in.Name, guardNS[ch.apex])
	}
	keys := zoneGuardKeys(in, objects)
	out := make([]kube.Resource, 0, len(guarded))
	for _, ch := range guarded {
		ns := guardNS[ch.apex]
		apexListener := ""
		if p := ch.apexPin; p != nil && p.kept && p.name != "" && p.admit.admits(t, ns) {
			apexListener = p.name
		}
		o, err := zoneGuardObject(in, ns, ch.apex, ch.slot.name, apexListener)
		if err != nil {
			return nil, err
		}
		out = append(out, kube.Resource{Key: keys[ch.apex], Object: o})
	}
	return out, nil
}

// zoneGuardRoute is the guard of the zone apex for the child listener and,
// when the apex has a listener of its own (apexListener), for the bare apex
// too: one parentRef and one hostname for each.
func zoneGuardRoute(in *Input, ns, apex, listener, apexListener string) *gwapiv1.HTTPRoute {
	refs := []gwapiv1.ParentReference{gatewayParentRef(in, listener)}
	hosts := []gwapiv1.Hostname{gwapiv1.Hostname("*." + apex)}
	if apexListener != "" {
		refs = append(refs, gatewayParentRef(in, apexListener))
		hosts = append(hosts, gwapiv1.Hostname(apex))
	}
	return &gwapiv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gwapiv1.GroupVersion.String(), Kind: KindHTTPRoute},
		ObjectMeta: metav1.ObjectMeta{Name: ZoneGuardName(in.Name), Namespace: ns, Labels: commonLabels(in)},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: refs},
			Hostnames:       hosts,
			Rules: []gwapiv1.HTTPRouteRule{{
				Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{
					Type:  ptr.To(gwapiv1.PathMatchExact),
					Value: ptr.To(ZoneGuardPath),
				}}},
			}},
		},
	}
}

// zoneGuardObject is the Object that writes a guard. It may create, update
// and delete its HTTPRoute (the default management policies): the route is
// the function's, in the child's namespace.
func zoneGuardObject(in *Input, ns, apex, listener, apexListener string) (*kobjv1alpha1.Object, error) {
	raw, err := jsonobj.Manifest(zoneGuardRoute(in, ns, apex, listener, apexListener))
	if err != nil {
		return nil, fmt.Errorf("cannot encode the zone guard of %s: %w", apex, err)
	}
	return writerObject(in, ZoneGuardObjectName(in.Name, ns), raw), nil
}

// isZoneGuard reports whether r is exactly a guard this TenantGateway
// composes: its name, in a namespace of a child apex (other than the
// owner's), the hostname *.<that apex> with one parentRef naming that
// apex's listener on this Gateway, or also the apex itself with a second
// parentRef naming the apex's own listener. Such a route claims nothing (a
// guard must not make its zone look used, see Budgets in docs/design.md). A
// tenant can make one, but only one that does what the function's does, in
// its own zone; any other route of that name is a claim like every route.
//
//nolint:gocyclo // Each check is one property of the exact route a guard is; apart they would read as options.
func isZoneGuard(in *Input, t *tenancy, r *Route) bool {
	n := len(r.Hostnames)
	if r.Kind != KindHTTPRoute || r.Name != ZoneGuardName(in.Name) || r.Namespace == in.Namespace ||
		n < 1 || n > 2 || len(r.ParentRefs) != n || in.Spec.CertMode == v1alpha1.CertModeHTTP01 {
		return false
	}
	apex := t.host(r.Namespace)
	if apex == "" || apex == in.Spec.Apex || r.Hostnames[0] != "*."+apex || (n == 2 && r.Hostnames[1] != apex) {
		return false
	}
	refs := parentRefsTo(in, r)
	if len(refs) != n || refs[0].Port != 0 || !namesChildListener(in, refs[0].SectionName, apex) {
		return false
	}
	return n == 1 || (refs[1].Port == 0 && namesPin(in, refs[1].SectionName, apex))
}

// namesPin reports whether section is the pin of hostname h in any of the
// forms its name can take.
func namesPin(in *Input, section, h string) bool {
	key, ok := strings.CutPrefix(section, pinPrefix(in.Spec.CertMode))
	return ok && (key == HostKey(h) || key == LongHostKey(h) || key == HashHostKey(h))
}

// namesChildListener reports whether section is the listener of child apex
// in any of the forms its name can take (see Names in docs/design.md):
// another listener (a pin whose label is "child" is named edge-child-…, a
// grandchild's) is no guard's.
func namesChildListener(in *Input, section, apex string) bool {
	key, ok := strings.CutPrefix(section, childPrefix(in.Spec.CertMode))
	return ok && (key == HostKey(apex) || key == LongHostKey(apex) || key == HashHostKey(apex))
}
