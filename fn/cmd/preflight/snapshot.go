package main

import (
	"fmt"
	"sort"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
)

// What the pre-flight reads, by kind. Objects of other kinds are ignored.
const (
	kindTenantGateway  = "TenantGateway"
	kindNamespace      = "Namespace"
	kindCRD            = "CustomResourceDefinition"
	kindSecret         = "Secret"
	kindDeployment     = "Deployment"
	kindHelmRelease    = "HelmRelease"
	kindBinding        = "ValidatingAdmissionPolicyBinding"
	kindEnvironment    = "EnvironmentConfig"
	kindSelfReview     = "SelfSubjectReview"
	kindGatewayClass   = "GatewayClass"
	crdTenantGateways  = "tenantgateways.gateway.cozystack.io"
	helmReleaseType    = "helm.sh/release.v1"
	keyHelmReleaseData = "release"
)

// snapshot is the cluster as the pre-flight read it: everything it judges
// comes from here, so that a test can hand it fixture objects.
type snapshot struct {
	TenantGateways []v1alpha1.TenantGateway
	Namespaces     map[string]*corev1.Namespace
	Routes         []gateway.Route
	Classes        map[string]*gateway.Class
	CRD            *unstructured.Unstructured
	// HelmReleases are the Secrets in which Helm keeps its releases.
	HelmReleases []corev1.Secret
	Deployments  []appsv1.Deployment
	// FluxReleases are Flux HelmReleases (any version).
	FluxReleases []*unstructured.Unstructured
	Bindings     []admissionv1.ValidatingAdmissionPolicyBinding
	// Environments are Crossplane EnvironmentConfigs by name.
	Environments map[string]*unstructured.Unstructured
	// Identity is who the pre-flight (and so the takeover, run with the
	// same credentials) acts as; nil when the API server did not say.
	Identity *authnv1.UserInfo
}

// newSnapshot sorts objects into a snapshot. An object of a kind it reads
// that does not decode is an error naming it.
func newSnapshot(objs []unstructured.Unstructured) (*snapshot, error) {
	s := &snapshot{Namespaces: map[string]*corev1.Namespace{}, Classes: map[string]*gateway.Class{}, Environments: map[string]*unstructured.Unstructured{}}
	for i := range objs {
		if err := s.add(&objs[i]); err != nil {
			return nil, fmt.Errorf("cannot read %s %s/%s: %w", objs[i].GetKind(), objs[i].GetNamespace(), objs[i].GetName(), err)
		}
	}
	sort.Slice(s.TenantGateways, func(i, j int) bool {
		a, b := s.TenantGateways[i], s.TenantGateways[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return s, nil
}

func (s *snapshot) add(u *unstructured.Unstructured) error {
	switch u.GetKind() {
	case kindTenantGateway:
		var t v1alpha1.TenantGateway
		if err := into(u, &t); err != nil {
			return err
		}
		s.TenantGateways = append(s.TenantGateways, t)
	case kindNamespace:
		var n corev1.Namespace
		if err := into(u, &n); err != nil {
			return err
		}
		s.Namespaces[n.Name] = &n
	case gateway.KindHTTPRoute, gateway.KindTLSRoute:
		s.Routes = append(s.Routes, routeOf(u))
	case kindGatewayClass:
		s.Classes[u.GetName()] = classOf(u)
	case kindCRD:
		if u.GetName() == crdTenantGateways {
			s.CRD = u
		}
	case kindHelmRelease:
		s.FluxReleases = append(s.FluxReleases, u)
	case kindEnvironment:
		s.Environments[u.GetName()] = u
	default:
		return s.addTyped(u)
	}
	return nil
}

func (s *snapshot) addTyped(u *unstructured.Unstructured) error {
	switch u.GetKind() {
	case kindSecret:
		var sec corev1.Secret
		if err := into(u, &sec); err != nil {
			return err
		}
		if sec.Type == helmReleaseType {
			s.HelmReleases = append(s.HelmReleases, sec)
		}
	case kindDeployment:
		var d appsv1.Deployment
		if err := into(u, &d); err != nil {
			return err
		}
		s.Deployments = append(s.Deployments, d)
	case kindBinding:
		var b admissionv1.ValidatingAdmissionPolicyBinding
		if err := into(u, &b); err != nil {
			return err
		}
		s.Bindings = append(s.Bindings, b)
	case kindSelfReview:
		var r authnv1.SelfSubjectReview
		if err := into(u, &r); err != nil {
			return err
		}
		s.Identity = &r.Status.UserInfo
	}
	return nil
}

// classOf reads a GatewayClass the way the function does.
func classOf(u *unstructured.Unstructured) *gateway.Class {
	c := &gateway.Class{Name: u.GetName()}
	c.ControllerName, _, _ = unstructured.NestedString(u.Object, "spec", "controllerName")
	for _, f := range sliceOf(u.Object, "status", "supportedFeatures") {
		if m, ok := f.(map[string]any); ok {
			name, _ := m["name"].(string)
			c.SupportedFeatures = append(c.SupportedFeatures, name)
		}
	}
	return c
}

func into(u *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return fmt.Errorf("cannot decode: %w", err)
	}
	return nil
}

func sliceOf(o map[string]any, path ...string) []any {
	l, _, _ := unstructured.NestedSlice(o, path...)
	return l
}

// routeOf reads a route the way the function does (fn/routes.go): its
// parentRefs and hostnames.
func routeOf(u *unstructured.Unstructured) gateway.Route {
	r := gateway.Route{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Solver: u.GetLabels()[gateway.LabelHTTP01Solver] == "true"}
	for _, p := range sliceOf(u.Object, "spec", "parentRefs") {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { v, _ := m[k].(string); return v }
		g, hasGroup := m["group"]
		port, _ := m["port"].(int64)
		r.ParentRefs = append(r.ParentRefs, gateway.ParentRef{
			Group: str("group"), CoreGroup: hasGroup && g == "", Kind: str("kind"), Namespace: str("namespace"), Name: str("name"),
			SectionName: str("sectionName"), Port: int32(port), //nolint:gosec // A port is at most 65535 (Gateway API schema).
		})
	}
	for _, h := range sliceOf(u.Object, "spec", "hostnames") {
		if v, ok := h.(string); ok {
			r.Hostnames = append(r.Hostnames, v)
		}
	}
	return r
}
