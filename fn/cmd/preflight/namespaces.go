package main

import (
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// checkNamespaces reports the attached namespaces whose gateway label or
// attached-by annotation names another owner. The Cozystack controller
// labels every attached namespace of every TenantGateway, the last one
// reconciled winning; the function admits an attached namespace only while
// its label is unset or its own ("Who may attach" in docs/design.md), so
// at its takeover such a namespace stops being admitted on this Gateway.
func checkNamespaces(s *snapshot, o options, r *report) {
	attachedBy := map[string][]string{}
	mine := map[string]bool{}
	for i := range s.TenantGateways {
		t := &s.TenantGateways[i]
		for _, a := range attached(t) {
			attachedBy[a] = append(attachedBy[a], t.Namespace+"/"+t.Name)
			if o.judged(t) {
				mine[a] = true
				checkAttached(s, t, a, r)
			}
		}
	}
	for _, ns := range sortedKeys(attachedBy) {
		if by := attachedBy[ns]; len(by) > 1 && mine[ns] {
			r.add(warning, topicNamespaces, "namespace %s is attached by %d TenantGateways (%s): only the owner its gateway label names admits it once the function runs; attach it to one of them (the platform's gateway.attachedNamespaces value goes to every gateway-owning tenant)",
				ns, len(by), strings.Join(by, ", "))
		}
	}
}

func checkAttached(s *snapshot, t *v1alpha1.TenantGateway, a string, r *report) {
	n := s.Namespaces[a]
	if n == nil {
		return
	}
	label, by := n.Labels[kube.LabelNamespaceGateway], n.Annotations[gateway.AnnotationAttachedBy]
	switch {
	case label != "" && label != t.Namespace:
		// Without a route of that namespace on this Gateway nothing stops
		// being served: the takeover may go on (a second gateway-owning
		// tenant of Cozystack carries the platform's attached namespaces
		// too, and no route of theirs names its Gateway).
		routes, count := routesOf(s, t, a)
		if count == 0 {
			r.add(warning, topicNamespaces, "TenantGateway %s/%s attaches namespace %s, whose label %s=%s (%s=%q) names another owner: once %s is taken over, the function does not admit it on this Gateway; no route of it names this Gateway today",
				t.Namespace, t.Name, a, kube.LabelNamespaceGateway, label, gateway.AnnotationAttachedBy, by, t.Namespace)
			return
		}
		r.add(blocker, topicNamespaces, "TenantGateway %s/%s attaches namespace %s, whose label %s=%s (%s=%q) names another owner: at the takeover of %s the function does not admit it, so %s on this Gateway stop being served",
			t.Namespace, t.Name, a, kube.LabelNamespaceGateway, label, gateway.AnnotationAttachedBy, by, t.Namespace, routes)
	case by != "" && by != t.Namespace:
		r.add(warning, topicNamespaces, "TenantGateway %s/%s attaches namespace %s, labelled for it but annotated %s=%s: the controller of %s would strip the label when it drops the namespace",
			t.Namespace, t.Name, a, gateway.AnnotationAttachedBy, by, by)
	}
}

// attached are the TenantGateway's attached namespaces besides its own,
// once each.
func attached(t *v1alpha1.TenantGateway) []string {
	var out []string
	for _, a := range t.Spec.AttachedNamespaces {
		if s := string(a); s != "" && s != t.Namespace && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// routesOf describes the routes of ns that name the TenantGateway's
// Gateway, and counts them.
func routesOf(s *snapshot, t *v1alpha1.TenantGateway, ns string) (string, int) {
	var ids []string
	for _, rt := range s.Routes {
		if rt.Namespace == ns && attachesTo(rt, t) {
			ids = append(ids, rt.ID())
		}
	}
	if len(ids) == 0 {
		return "its routes (none today)", 0
	}
	return fmt.Sprintf("its %d routes (%s)", len(ids), text.BoundedList("", ids, ", ", "")), len(ids)
}

// attachesTo is the Cozystack controller's attachment test: a parentRef of
// the Gateway API group (or none), kind Gateway (or none), naming the
// TenantGateway's Gateway in its namespace; sectionName and port are not
// read.
func attachesTo(rt gateway.Route, t *v1alpha1.TenantGateway) bool {
	for _, p := range rt.ParentRefs {
		ns := p.Namespace
		if ns == "" {
			ns = rt.Namespace
		}
		if (p.Group == "" || p.Group == "gateway.networking.k8s.io") && (p.Kind == "" || p.Kind == "Gateway") && ns == t.Namespace && p.Name == t.Name {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
