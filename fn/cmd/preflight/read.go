package main

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// A source is one kind the pre-flight reads: listed, or fetched by name.
// Versions are tried in order; a kind the cluster does not serve is
// skipped (a platform without Flux, or without the admission policies).
type source struct {
	group, kind string
	versions    []string
	// namespace and name, for a get; a list otherwise.
	namespace, name string
	labels          map[string]string
}

// sources are what the pre-flight reads, given the options and the
// release named on the CRD.
func sources(o options, releaseNS, release string) []source {
	gw := "gateway.networking.k8s.io"
	return []source{
		{group: "gateway.cozystack.io", kind: kindTenantGateway, versions: []string{"v1alpha1"}},
		{kind: kindNamespace, versions: []string{"v1"}},
		{group: gw, kind: "HTTPRoute", versions: []string{"v1"}},
		{group: gw, kind: "TLSRoute", versions: []string{"v1", "v1alpha2"}},
		{group: gw, kind: kindGatewayClass, versions: []string{"v1"}},
		{kind: kindSecret, versions: []string{"v1"}, namespace: releaseNS, labels: map[string]string{labelHelmOwner: "helm", labelHelmName: release}},
		{group: "apps", kind: kindDeployment, versions: []string{"v1"}, namespace: o.ControllerNamespace, name: o.ControllerName},
		{group: "helm.toolkit.fluxcd.io", kind: kindHelmRelease, versions: []string{"v2", "v2beta2", "v2beta1"}, namespace: o.ControllerNamespace, name: o.ControllerName},
		{group: "admissionregistration.k8s.io", kind: kindBinding, versions: []string{"v1"}},
		{group: "apiextensions.crossplane.io", kind: kindEnvironment, versions: []string{"v1beta1", "v1alpha1"}, name: o.TrustedCallers},
	}
}

// read fetches everything the pre-flight judges. It only reads (and asks
// the API server who the caller is, which stores nothing).
func read(ctx context.Context, c *live.Reader, o options) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	crd, err := fetch(ctx, c, source{group: "apiextensions.k8s.io", kind: kindCRD, versions: []string{"v1"}, name: crdTenantGateways})
	if err != nil {
		return nil, err
	}
	out = append(out, crd...)
	releaseNS, release := helmDefaultNamespace, o.ControllerName
	if len(crd) == 1 && crd[0].GetAnnotations()[annotationRelease] != "" {
		releaseNS, release = crd[0].GetAnnotations()[annotationReleaseNS], crd[0].GetAnnotations()[annotationRelease]
	}
	for _, s := range sources(o, releaseNS, release) {
		objs, err := fetch(ctx, c, s)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	// Without an answer the identity check says the API server did not say.
	if review, err := c.WhoAmI(ctx); err == nil {
		review.SetKind(kindSelfReview)
		out = append(out, *review)
	}
	return out, nil
}

// fetch reads one source with the first version the cluster serves.
func fetch(ctx context.Context, c *live.Reader, s source) ([]unstructured.Unstructured, error) {
	for _, v := range s.versions {
		apiVersion := v
		if s.group != "" {
			apiVersion = s.group + "/" + v
		}
		objs, err := fetchVersion(ctx, c, apiVersion, s)
		switch {
		case errors.Is(err, live.ErrNotServed):
			continue
		case err != nil:
			return nil, fmt.Errorf("cannot read %s: %w", s.kind, err)
		}
		return objs, nil
	}
	return nil, nil
}

func fetchVersion(ctx context.Context, c *live.Reader, apiVersion string, s source) ([]unstructured.Unstructured, error) {
	if s.name != "" {
		u, err := c.Get(ctx, apiVersion, s.kind, s.namespace, s.name)
		if u == nil || err != nil {
			return nil, err
		}
		return []unstructured.Unstructured{*u}, nil
	}
	return c.List(ctx, apiVersion, s.kind, s.namespace, s.labels)
}

var errBlockers = errors.New("the pre-flight reports blockers")
