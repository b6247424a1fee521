package fn

import (
	"fmt"
	"maps"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kclusterv1alpha2 "github.com/crossplane-contrib/provider-kubernetes/apis/cluster/object/v1alpha2"
	kobjv1alpha1 "github.com/crossplane-contrib/provider-kubernetes/apis/namespaced/object/v1alpha1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	fnv1beta1 "github.com/cozystack/function-tenant-gateway/apis/fn/v1beta1"
	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/internal/jsonobj"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// zeroFields are fields whose Go types lack omitempty, so a typed object
// always carries them, set to their zero value. Crossplane applies desired
// state with server-side apply, where every field sent is an opinion the
// function then owns; these are dropped so the function only owns what it
// means. Keyed by kind, each a field path below the object.
var zeroFields = map[string][][]string{
	// cert-manager's ACMEIssuer booleans have no omitempty.
	"Issuer": {
		{"spec", "acme", "disableAccountKeyGeneration"},
		{"spec", "acme", "enableDurationFeature"},
		{"spec", "acme", "skipTLSVerify"},
		// Unset route53 secret ref: ambient credentials.
		{"spec", "acme", "solvers", "[]", "dns01", "route53", "secretAccessKeySecretRef"},
	},
	"Certificate": {
		{"spec", "isCA"},
	},
	// provider-kubernetes: the function never asks it to watch.
	"Object": {
		{"spec", "watch"},
	},
}

// toComposed converts a typed object into a desired composed resource. Status
// is never desired: it belongs to the object's controller.
func toComposed(r kube.Resource) (*composed.Unstructured, error) {
	shell, manifest := splitManifest(r.Object)
	cd, err := composed.From(shell)
	if err != nil {
		return nil, fmt.Errorf("cannot convert %s %q to a composed resource: %w", r.Object.GetObjectKind().GroupVersionKind().Kind, r.Object.GetName(), err)
	}
	delete(cd.Object, "status")
	for _, path := range zeroFields[cd.GetKind()] {
		dropZero(cd.Object, path)
	}
	if manifest != nil {
		spec, _ := cd.Object["spec"].(map[string]any)
		fp, ok := spec["forProvider"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("cannot place the manifest of Object %q: it has no spec.forProvider", r.Object.GetName())
		}
		fp["manifest"] = manifest
	}
	return cd, nil
}

// splitManifest returns a provider-kubernetes Object whose manifest is held
// as unstructured content (see jsonobj.Manifest) without it, and the
// manifest: composed.From converts objects through two JSON passes, which
// the manifest, already in the shape the response needs, can skip. Any
// other object comes back whole, with a nil manifest.
func splitManifest(o runtime.Object) (runtime.Object, map[string]any) {
	switch t := o.(type) {
	case *kobjv1alpha1.Object:
		if m := jsonobj.Content(t.Spec.ForProvider.Manifest); m != nil {
			shell := *t
			shell.Spec.ForProvider.Manifest = runtime.RawExtension{}
			return &shell, m
		}
	case *kclusterv1alpha2.Object:
		if m := jsonobj.Content(t.Spec.ForProvider.Manifest); m != nil {
			shell := *t
			shell.Spec.ForProvider.Manifest = runtime.RawExtension{}
			return &shell, m
		}
	}
	return o, nil
}

// dropZero deletes the field at path if it holds its zero value. A path
// element "[]" stands for every item of a list.
func dropZero(obj map[string]any, path []string) {
	if len(path) == 0 {
		return
	}
	k := path[0]
	if len(path) == 1 {
		if isZero(obj[k]) {
			delete(obj, k)
		}
		return
	}
	if path[1] == "[]" {
		items, _ := obj[k].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				dropZero(m, path[2:])
			}
		}
		return
	}
	if m, ok := obj[k].(map[string]any); ok {
		dropZero(m, path[1:])
	}
}

// isZero reports whether v is false, "", or an object of zero values.
func isZero(v any) bool {
	switch v := v.(type) {
	case bool:
		return !v
	case string:
		return v == ""
	case map[string]any:
		for _, f := range v {
			if !isZero(f) {
				return false
			}
		}
		return true
	}
	return false
}

func init() { //nolint:gochecknoinits // composed.From needs the kinds we compose in its scheme.
	for _, add := range []func(*runtime.Scheme) error{
		gwapiv1.Install, cmv1.AddToScheme, corev1.AddToScheme,
		kobjv1alpha1.SchemeBuilder.AddToScheme, kclusterv1alpha2.SchemeBuilder.AddToScheme,
	} {
		if err := add(composed.Scheme); err != nil {
			panic(fmt.Sprintf("cannot register composed kinds: %v", err))
		}
	}
}

// setComposed overlays the composed resources on the desired state of
// earlier pipeline steps, each marked ready as ready says by its key. The
// earlier steps' resources are written as the SDK writes them; the function's
// own go out as Struct wire bytes (see structEncoder).
func setComposed(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, resources []kube.Resource, ready map[string]bool) error {
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return fmt.Errorf("cannot get desired composed resources: %w", err)
	}
	cds := make([]*composed.Unstructured, len(resources))
	for i, r := range resources {
		if cds[i], err = toComposed(r); err != nil {
			return err
		}
	}
	var e structEncoder
	own := make(map[string]*fnv1.Resource, len(resources))
	for i, r := range resources {
		state := fnv1.Ready_READY_FALSE
		if ready[r.Key] {
			state = fnv1.Ready_READY_TRUE
		}
		if own[r.Key], err = e.desiredResource(cds[i].UnstructuredContent(), state); err != nil {
			if _, aerr := resource.AsStruct(cds[i]); aerr != nil {
				err = aerr
			}
			return fmt.Errorf("cannot set desired composed resources: %w", err)
		}
		delete(desired, resource.Name(r.Key))
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		return fmt.Errorf("cannot set desired composed resources: %w", err)
	}
	maps.Copy(rsp.Desired.Resources, own)
	return nil
}

// writeStatus merges the fields of a typed status into the desired XR's
// status. The fields are plain JSON values after one round trip, so they go
// straight into the object rather than through SetValue's own round trip per
// field; empty lists are left out. unready marks the XR not ready whatever
// its composed resources say (Crossplane then reports Ready=False, Creating).
// The XR goes out as Struct wire bytes (see structEncoder), with the
// connection details and readiness the SDK would write.
func writeStatus(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, status any, unready bool) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot get the desired composite resource: %w", err)
	}
	fields, err := statusFields(status)
	if err != nil {
		return err
	}
	st, _ := dxr.Resource.Object["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		dxr.Resource.Object["status"] = st
	}
	for k, v := range fields {
		st[k] = v
	}
	state := fnv1.Ready_READY_UNSPECIFIED
	if unready {
		state = fnv1.Ready_READY_FALSE
	}
	var e structEncoder
	r, err := e.desiredResource(dxr.Resource.UnstructuredContent(), state)
	if err != nil {
		// The SDK's error where it gives one: the encoder fails where it does.
		if serr := response.SetDesiredCompositeResource(&fnv1.RunFunctionResponse{}, dxr); serr != nil {
			err = serr
		}
		return fmt.Errorf("cannot set the desired composite resource: %w", err)
	}
	r.ConnectionDetails = dxr.ConnectionDetails
	if rsp.GetDesired() == nil {
		rsp.Desired = &fnv1.State{}
	}
	rsp.Desired.Composite = r
	return nil
}

// statusFields turns a typed status into the JSON fields Crossplane merges
// into the XR's status.
func statusFields(s any) (map[string]any, error) {
	// A TenantGateway's hostnames, one entry per hostname of every route,
	// are written straight as wire bytes; the rest goes through the
	// converter.
	var hostnames []v1alpha1.HostnameStatus
	if st, ok := s.(*v1alpha1.TenantGatewayStatus); ok && len(st.Hostnames) > 0 {
		rest := *st
		hostnames, rest.Hostnames = st.Hostnames, nil
		s = &rest
	}
	// The unstructured converter walks the struct by reflection, honouring
	// omitempty, without encoding it to JSON bytes and back.
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode status: %w", err)
	}
	if hostnames != nil {
		v, err := hostnamesValue(hostnames)
		if err != nil {
			return nil, fmt.Errorf("cannot encode status: %w", err)
		}
		m["hostnames"] = v
	}
	return m, nil
}

// setCondition writes a condition of the XR, True or False; the caller says
// whom it targets.
func setCondition(rsp *fnv1.RunFunctionResponse, typ, reason string, status bool, message string) *response.ConditionOption {
	set := response.ConditionFalse
	if status {
		set = response.ConditionTrue
	}
	return set(rsp, typ, reason).WithMessage(message)
}

// platformSelector asks for the platform EnvironmentConfig by name.
func platformSelector(settings fnv1beta1.Input) *fnv1.ResourceSelector {
	return byName("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", settings.PlatformConfigName)
}

func all(apiVersion, kind string, labels map[string]string) *fnv1.ResourceSelector {
	if labels == nil {
		labels = map[string]string{}
	}
	return &fnv1.ResourceSelector{
		ApiVersion: apiVersion,
		Kind:       kind,
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: labels}},
	}
}

func byName(apiVersion, kind, name string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
}
