package live

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// ErrNotServed is returned for a kind the cluster does not serve.
var ErrNotServed = errors.New("the cluster does not serve this kind")

// listPage is how many objects one list request returns: a platform's
// routes or namespaces come in pages rather than one response of unbounded
// size.
const listPage = 500

// A Reader reads a cluster: objects by name, by list, and every object of a
// kind at once, kept for the life of the Reader, for answering many
// selectors (a Source). It only reads, besides asking who the caller is,
// which stores nothing.
type Reader struct {
	dyn  dynamic.Interface
	disc discovery.DiscoveryInterface

	mu sync.Mutex
	// kinds are the resources of each group version the cluster serves,
	// by kind; nil for a group version it does not serve.
	kinds map[string]map[string]metav1.APIResource
	// indexes are every object of a kind, by "apiVersion kind".
	indexes map[string]*index
	// overrides replace the live objects of the same kind and name.
	overrides map[string][]*structpb.Struct
}

// NewReader reads through a dynamic client and a discovery client.
func NewReader(dyn dynamic.Interface, disc discovery.DiscoveryInterface) *Reader {
	return &Reader{dyn: dyn, disc: disc, kinds: map[string]map[string]metav1.APIResource{}, indexes: map[string]*index{}, overrides: map[string][]*structpb.Struct{}}
}

// Connect reads the cluster of a kubeconfig: the file named, else where
// kubectl looks ($KUBECONFIG, then ~/.kube/config), else the service
// account of the pod it runs in.
func Connect(kubeconfig string) (*Reader, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		where := kubeconfig
		if where == "" {
			where = "--kubeconfig, $KUBECONFIG, ~/.kube/config or the pod's service account"
		}
		return nil, fmt.Errorf("cannot load the kubeconfig (%s): %w", where, err)
	}
	// A plan lists each kind once; a platform's worth of kinds and pages
	// should not wait on client-go's default of 5 requests a second.
	cfg.QPS, cfg.Burst = 50, 100
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build a client for %s: %w", cfg.Host, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build a discovery client for %s: %w", cfg.Host, err)
	}
	return NewReader(dyn, disc), nil
}

// resource finds the resource that serves a kind; ErrNotServed when none.
func (r *Reader) resource(apiVersion, kind string) (schema.GroupVersionResource, bool, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("cannot parse apiVersion %q: %w", apiVersion, err)
	}
	r.mu.Lock()
	kinds, known := r.kinds[apiVersion]
	r.mu.Unlock()
	if !known {
		l, err := r.disc.ServerResourcesForGroupVersion(apiVersion)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return schema.GroupVersionResource{}, false, fmt.Errorf("cannot discover the resources of %s: %w", apiVersion, err)
		default:
			kinds = map[string]metav1.APIResource{}
			for _, res := range l.APIResources {
				if _, taken := kinds[res.Kind]; !taken && res.Group == "" && res.Version == "" && !isSubresource(res.Name) {
					kinds[res.Kind] = res
				}
			}
		}
		r.mu.Lock()
		r.kinds[apiVersion] = kinds
		r.mu.Unlock()
	}
	res, ok := kinds[kind]
	if !ok {
		return schema.GroupVersionResource{}, false, fmt.Errorf("%s %s: %w", apiVersion, kind, ErrNotServed)
	}
	return gv.WithResource(res.Name), res.Namespaced, nil
}

func isSubresource(name string) bool {
	for _, c := range name {
		if c == '/' {
			return true
		}
	}
	return false
}

// Served reports whether the cluster serves a kind at an apiVersion.
func (r *Reader) Served(_ context.Context, apiVersion, kind string) (bool, error) {
	_, _, err := r.resource(apiVersion, kind)
	if errors.Is(err, ErrNotServed) {
		return false, nil
	}
	return err == nil, err
}

// Get reads one object; nil when there is none of that name.
func (r *Reader) Get(ctx context.Context, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	gvr, namespaced, err := r.resource(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	var c dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if namespaced {
		c = r.dyn.Resource(gvr).Namespace(namespace)
	}
	u, err := c.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cannot get %s %s %s/%s: %w", apiVersion, kind, namespace, name, err)
	}
	return u, nil
}

// List reads every object of a kind in a namespace ("": all) with the
// labels given (none: every object), page by page.
func (r *Reader) List(ctx context.Context, apiVersion, kind, namespace string, match map[string]string) ([]unstructured.Unstructured, error) {
	gvr, namespaced, err := r.resource(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	var c dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if namespaced && namespace != "" {
		c = r.dyn.Resource(gvr).Namespace(namespace)
	}
	opts := metav1.ListOptions{Limit: listPage, LabelSelector: labels.SelectorFromSet(match).String()}
	var out []unstructured.Unstructured
	for {
		l, err := c.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("cannot list %s %s: %w", apiVersion, kind, err)
		}
		for i := range l.Items {
			// A list's items may come without their kind.
			l.Items[i].SetAPIVersion(apiVersion)
			l.Items[i].SetKind(kind)
		}
		out = append(out, l.Items...)
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// WhoAmI asks the API server who the caller is (a SelfSubjectReview, which
// it answers without storing anything).
func (r *Reader) WhoAmI(ctx context.Context) (*unstructured.Unstructured, error) {
	gvr := schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}
	review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}}
	u, err := r.dyn.Resource(gvr).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot ask who the caller is: %w", err)
	}
	return u, nil
}

// Override answers selectors with obj in place of the live object of its
// kind, namespace and name (or beside the live ones when there is none):
// settings proposed rather than applied.
func (r *Reader) Override(obj *unstructured.Unstructured) error {
	s, err := structpb.NewStruct(obj.Object)
	if err != nil {
		return fmt.Errorf("cannot read %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	key := obj.GetAPIVersion() + " " + obj.GetKind()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overrides[key] = append(r.overrides[key], s)
	delete(r.indexes, key)
	return nil
}

// Select answers a selector from every object of its kind, read once.
func (r *Reader) Select(ctx context.Context, sel *fnv1.ResourceSelector) ([]*structpb.Struct, error) {
	ix, err := r.index(ctx, sel.GetApiVersion(), sel.GetKind())
	if err != nil {
		return nil, err
	}
	return ix.selectAll(sel), nil
}

// Object is the object of a kind, namespace ("" for a cluster-scoped kind)
// and name, from every object of its kind read once; nil when there is none.
func (r *Reader) Object(ctx context.Context, apiVersion, kind, namespace, name string) (*structpb.Struct, error) {
	sel := &fnv1.ResourceSelector{ApiVersion: apiVersion, Kind: kind, Namespace: &namespace, Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
	objs, err := r.Select(ctx, sel)
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	return objs[0], nil
}

// index reads every object of a kind once.
func (r *Reader) index(ctx context.Context, apiVersion, kind string) (*index, error) {
	key := apiVersion + " " + kind
	r.mu.Lock()
	ix := r.indexes[key]
	r.mu.Unlock()
	if ix != nil {
		return ix, nil
	}
	items, err := r.List(ctx, apiVersion, kind, "", nil)
	if err != nil {
		return nil, err
	}
	objs := make([]*structpb.Struct, 0, len(items))
	for i := range items {
		s, err := structpb.NewStruct(items[i].Object)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s %s/%s: %w", kind, items[i].GetNamespace(), items[i].GetName(), err)
		}
		objs = append(objs, s)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ix = newIndex(objs, r.overrides[key])
	r.indexes[key] = ix
	return ix, nil
}

// index holds every object of one kind by namespace and name, by name, by
// namespace and by label: a platform's thousand TenantGateways each look up
// their own objects, and a walk over every object per selector would make
// a plan quadratic in the platform's size.
type index struct {
	all     []*structpb.Struct
	byKey   map[string][]*structpb.Struct
	byName  map[string][]*structpb.Struct
	byNS    map[string][]*structpb.Struct
	byLabel map[string][]*structpb.Struct
}

// newIndex indexes objs, each of overrides replacing the object of its
// namespace and name.
func newIndex(objs, overrides []*structpb.Struct) *index {
	id := func(s *structpb.Struct) (string, string) {
		md := s.GetFields()["metadata"].GetStructValue().GetFields()
		return md["namespace"].GetStringValue(), md["name"].GetStringValue()
	}
	replaced := map[[2]string]bool{}
	for _, o := range overrides {
		ns, name := id(o)
		replaced[[2]string{ns, name}] = true
	}
	ix := &index{byKey: map[string][]*structpb.Struct{}, byName: map[string][]*structpb.Struct{}, byNS: map[string][]*structpb.Struct{}, byLabel: map[string][]*structpb.Struct{}}
	for _, s := range append(objs, overrides...) {
		ns, name := id(s)
		if replaced[[2]string{ns, name}] && !containsPtr(overrides, s) {
			continue
		}
		ix.all = append(ix.all, s)
		ix.byKey[ns+"/"+name] = append(ix.byKey[ns+"/"+name], s)
		ix.byName[name] = append(ix.byName[name], s)
		ix.byNS[ns] = append(ix.byNS[ns], s)
		for k, v := range s.GetFields()["metadata"].GetStructValue().GetFields()["labels"].GetStructValue().GetFields() {
			ix.byLabel[k+"="+v.GetStringValue()] = append(ix.byLabel[k+"="+v.GetStringValue()], s)
		}
	}
	return ix
}

func containsPtr(l []*structpb.Struct, s *structpb.Struct) bool {
	for _, o := range l {
		if o == s {
			return true
		}
	}
	return false
}

// selectAll answers a selector from the narrowest set that holds every
// match.
func (ix *index) selectAll(sel *fnv1.ResourceSelector) []*structpb.Struct {
	candidates := ix.all
	labels := sel.GetMatchLabels().GetLabels()
	switch {
	case sel.GetMatchName() != "" && sel.Namespace != nil:
		candidates = ix.byKey[sel.GetNamespace()+"/"+sel.GetMatchName()]
	case sel.GetMatchName() != "":
		candidates = ix.byName[sel.GetMatchName()]
	case len(labels) > 0:
		// Every match carries each label: any one narrows the set.
		k := sortedFirst(labels)
		candidates = ix.byLabel[k+"="+labels[k]]
	case sel.Namespace != nil:
		candidates = ix.byNS[sel.GetNamespace()]
	}
	out := make([]*structpb.Struct, 0, len(candidates))
	for _, s := range candidates {
		if Matches(s, sel) {
			out = append(out, s)
		}
	}
	return out
}

// sortedFirst is the smallest key of m, so that the same selector walks the
// same set.
func sortedFirst(m map[string]string) string {
	first := ""
	for k := range m {
		if first == "" || k < first {
			first = k
		}
	}
	return first
}
