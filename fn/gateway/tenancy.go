package gateway

import (
	"maps"
	"slices"
	"strings"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// A tenancy is who may use this Gateway and for which hostnames: the
// admitted namespaces with the labels they will carry once the function's
// namespace patches are applied, and what each was delegated (see "Who may
// attach" in docs/design.md).
type tenancy struct {
	// owner is the TenantGateway's namespace.
	owner string
	// apex of the TenantGateway.
	apex string
	// certManager is the namespace of cert-manager's HTTP-01 challenge
	// routes.
	certManager string
	// publishers are the owner and the attached namespaces that are not
	// marked for another Gateway, sorted by name with the owner first.
	publishers []string
	publisher  map[string]bool
	// foreign are the attached namespaces whose gateway label another
	// Gateway's owner set; they are not admitted.
	foreign []string
	// labels are the labels of every admitted namespace, by name.
	labels map[string]map[string]string
	// apexZone are the namespaces the apex listeners admit, by name: the
	// publishers without a host label and every admitted namespace whose
	// host label is the apex.
	apexZone []string
	// attached are the namespaces the function labels (see
	// AttachedNamespaces).
	attached []string
}

// newTenancy reads the admitted namespaces: the TenantGateway's own, the
// attached ones, and every namespace labelled as publishing through this
// Gateway. The owner and attached namespaces count with the gateway label
// the function writes on them, unless another owner's label is there.
func newTenancy(in *Input) *tenancy {
	t := &tenancy{owner: in.Namespace, apex: in.Spec.Apex, certManager: in.CertManagerNamespace, publisher: map[string]bool{}, labels: map[string]map[string]string{}}
	for _, n := range in.Namespaces {
		if n.Labels[kube.LabelNamespaceGateway] == in.Namespace {
			t.labels[n.Name] = n.Labels
		}
	}
	t.attached = AttachedNamespaces(in.Namespace, in.Spec.AttachedNamespaces)
	for _, ns := range t.attached {
		t.addPublisher(in, ns)
	}
	for _, ns := range slices.Sorted(maps.Keys(t.publisher)) {
		if ns != in.Namespace {
			t.publishers = append(t.publishers, ns)
		}
	}
	if t.publisher[in.Namespace] {
		t.publishers = append([]string{in.Namespace}, t.publishers...)
	}
	for ns := range t.labels {
		if t.inApexZone(ns) {
			t.apexZone = append(t.apexZone, ns)
		}
	}
	slices.Sort(t.apexZone)
	return t
}

// addPublisher admits the owner or an attached namespace with the gateway
// label the function writes on it, unless another owner's label is there.
func (t *tenancy) addPublisher(in *Input, ns string) {
	var labels map[string]string
	if n := in.NamedNamespaces[ns]; n != nil {
		labels = n.Labels
	} else if l, ok := t.labels[ns]; ok {
		labels = l
	}
	if g := labels[kube.LabelNamespaceGateway]; g != "" && g != in.Namespace {
		t.foreign = append(t.foreign, ns)
		return
	}
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	l[kube.LabelNamespaceGateway] = in.Namespace
	t.labels[ns] = l
	t.publisher[ns] = true
}

// inApexZone reports whether ns was delegated the apex itself: an admitted
// namespace whose host label is the apex, or a publisher without one.
func (t *tenancy) inApexZone(ns string) bool {
	h := t.host(ns)
	return t.admitted(ns) && (h == t.apex || h == "" && t.publisher[ns])
}

// admitted reports whether routes of ns count at all.
func (t *tenancy) admitted(ns string) bool {
	_, ok := t.labels[ns]
	return ok
}

// host is the namespace's host label, or "".
func (t *tenancy) host(ns string) string { return t.labels[ns][kube.LabelNamespaceHost] }

// delegation is the domain ns may claim hostnames in: its host label, else
// the apex for the owner and attached namespaces. Other namespaces without
// a host label were delegated nothing.
func (t *tenancy) delegation(ns string) (string, bool) {
	if h := t.host(ns); h != "" {
		return h, true
	}
	if t.publisher[ns] {
		return t.apex, true
	}
	return "", false
}

// turn is who takes one turn per round in the budgets' round-robin: the
// owner, then each attached namespace, then each branch of the delegation
// tree (the child apex one label below the apex, with every namespace
// under it), by name. A branch, not a namespace, takes a turn, since a
// tenant creates nested tenants (namespaces) at will.
func (t *tenancy) turn(ns string) (int, string) {
	switch {
	case ns == t.owner:
		return 0, ""
	case t.publisher[ns]:
		return 1, ns
	}
	h := t.host(ns)
	if rest, ok := strings.CutSuffix(h, "."+t.apex); ok {
		return 2, rest[strings.LastIndexByte(rest, '.')+1:] + "." + t.apex
	}
	// The apex itself, or outside it: the namespace alone.
	return 2, "=" + ns
}

// apexPublishers are the publishers delegated the apex (no host label, or
// the apex): the only ones a passthrough <svc>.<apex> is delegated to.
func (t *tenancy) apexPublishers() []string {
	var out []string
	for _, ns := range t.publishers {
		if t.inApexZone(ns) {
			out = append(out, ns)
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}
