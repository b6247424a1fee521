package main

import (
	"context"
	"errors"
	"fmt"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A source is one kind the pre-flight reads: listed, or fetched by name.
// Versions are tried in order; a kind the cluster does not serve is
// skipped (a platform without Flux, or without the admission policies).
type source struct {
	group, kind string
	versions    []string
	// namespace and name, for a get; a list otherwise.
	namespace, name string
	labels          client.MatchingLabels
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
		{kind: kindSecret, versions: []string{"v1"}, namespace: releaseNS, labels: client.MatchingLabels{labelHelmOwner: "helm", labelHelmName: release}},
		{group: "apps", kind: kindDeployment, versions: []string{"v1"}, namespace: o.ControllerNamespace, name: o.ControllerName},
		{group: "helm.toolkit.fluxcd.io", kind: kindHelmRelease, versions: []string{"v2", "v2beta2", "v2beta1"}, namespace: o.ControllerNamespace, name: o.ControllerName},
		{group: "admissionregistration.k8s.io", kind: kindBinding, versions: []string{"v1"}},
		{group: "apiextensions.crossplane.io", kind: kindEnvironment, versions: []string{"v1beta1", "v1alpha1"}, name: o.TrustedCallers},
	}
}

// read fetches everything the pre-flight judges. It only reads (and asks
// the API server who the caller is, which stores nothing).
func read(ctx context.Context, c client.Client, o options) ([]unstructured.Unstructured, error) {
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
	review := &authnv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err == nil {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(review)
		if err != nil {
			return nil, fmt.Errorf("cannot read the SelfSubjectReview: %w", err)
		}
		r := unstructured.Unstructured{Object: u}
		r.SetKind(kindSelfReview)
		out = append(out, r)
	}
	return out, nil
}

// fetch reads one source with the first version the cluster serves.
func fetch(ctx context.Context, c client.Client, s source) ([]unstructured.Unstructured, error) {
	for _, v := range s.versions {
		gvk := schema.GroupVersionKind{Group: s.group, Version: v, Kind: s.kind}
		objs, err := fetchVersion(ctx, c, gvk, s)
		switch {
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && s.name == "":
			continue
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("cannot read %s: %w", gvk.GroupKind(), err)
		}
		return objs, nil
	}
	return nil, nil
}

func fetchVersion(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, s source) ([]unstructured.Unstructured, error) {
	if s.name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.name}, u); err != nil {
			return nil, err
		}
		return []unstructured.Unstructured{*u}, nil
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{s.labels}
	if s.namespace != "" {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	if err := c.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	for i := range l.Items {
		// A list's items may come without their kind.
		l.Items[i].SetGroupVersionKind(gvk)
	}
	return l.Items, nil
}

var errBlockers = errors.New("the pre-flight reports blockers")
