package main

import (
	"errors"
	"fmt"
	"slices"
	"time"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tgwspec"
)

// options name what the pre-flight looks for where a platform may differ.
type options struct {
	// Kubeconfig names the cluster to read; empty: where kubectl looks.
	Kubeconfig string
	// CertManagerNamespace is admitted on the port-80 listener (the
	// platform settings' default).
	CertManagerNamespace string
	// ControllerNamespace and ControllerName are the Cozystack controller's
	// Deployment and the Flux HelmRelease of its chart.
	ControllerNamespace string
	ControllerName      string
	// TrustedCallers is the EnvironmentConfig the admission policies read.
	TrustedCallers string
	// Only, as namespace/name, limits the findings about TenantGateways to
	// that one (the one a takeover is about to resume); the CRD, the
	// controller and the identity are judged all the same.
	Only string
}

// judged reports whether the pre-flight reports on this TenantGateway.
func (o options) judged(t *v1alpha1.TenantGateway) bool {
	return o.Only == "" || o.Only == t.Namespace+"/"+t.Name
}

func defaultOptions() options {
	return options{
		CertManagerNamespace: "cozy-cert-manager",
		ControllerNamespace:  "cozy-system",
		ControllerName:       "cozystack-controller",
		TrustedCallers:       "tenant-gateway-trusted-callers",
	}
}

// preflight judges a snapshot: every check reads, none writes.
func preflight(s *snapshot, o options) report {
	var r report
	checkNamespaces(s, o, &r)
	for i := range s.TenantGateways {
		t := &s.TenantGateways[i]
		if !o.judged(t) {
			continue
		}
		out, err := composeFor(s, t, o)
		if err != nil {
			r.add(blocker, topicSpecs, "TenantGateway %s/%s is refused by the function, so its takeover stalls (Synced=False, nothing composed): %v", t.Namespace, t.Name, err)
			continue
		}
		checkSpecWarnings(t, out, &r)
		checkWinners(s, t, out, &r)
	}
	checkIdentity(s, o, &r)
	checkCRD(s, o, &r)
	checkController(s, o, &r)
	if o.Only != "" && !slices.ContainsFunc(s.TenantGateways, func(t v1alpha1.TenantGateway) bool { return o.judged(&t) }) {
		r.add(blocker, topicSpecs, "no TenantGateway %s", o.Only)
	}
	return r
}

// composeFor runs the function's own computation (fn/gateway) for one
// TenantGateway on what the cluster holds now, as its first run after the
// takeover would: nothing observed yet, no previous status.
func composeFor(s *snapshot, t *v1alpha1.TenantGateway, o options) (*gateway.Output, error) {
	in := gateway.Input{
		Name: t.Name, Namespace: t.Namespace, UID: string(t.UID), Spec: t.Spec,
		CertManagerNamespace: o.CertManagerNamespace,
		Routes:               s.Routes,
		NamedNamespaces:      map[string]*gateway.Namespace{},
		GatewayClass:         s.Classes[tgwspec.Defaulted(t.Spec).GatewayClassName],
		Now:                  time.Now(),
	}
	for _, n := range s.Namespaces {
		if n.Labels[kube.LabelNamespaceGateway] == t.Namespace {
			in.Namespaces = append(in.Namespaces, gateway.Namespace{Name: n.Name, Labels: n.Labels, Annotations: n.Annotations})
		}
	}
	for _, name := range gateway.NamedNamespaces(t.Namespace, t.Spec.AttachedNamespaces, func(func(string) bool) {}) {
		if n := s.Namespaces[name]; n != nil {
			in.NamedNamespaces[name] = &gateway.Namespace{Name: n.Name, Labels: n.Labels, Annotations: n.Annotations}
		} else {
			in.NamedNamespaces[name] = nil
		}
	}
	out, err := gateway.Compose(in)
	if err != nil {
		var invalid *gateway.InvalidSpecError
		if errors.As(err, &invalid) {
			return nil, invalid
		}
		return nil, fmt.Errorf("cannot compute what the function would compose: %w", err)
	}
	return out, nil
}
