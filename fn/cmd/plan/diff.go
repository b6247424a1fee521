package main

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	v1alpha1 "github.com/cozystack/function-tenant-gateway/apis/gateway/v1alpha1"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/text"
)

// What a change is about. Every category but conditions is served: the
// Gateway, its certificates, the namespaces' marks and the objects the
// function composes.
const (
	catRefused     = "refused"
	catListener    = "listener"
	catRoute       = "route"
	catCertificate = "certificate"
	catNamespace   = "namespace"
	catObject      = "object"
	catResource    = "resource"
	catCondition   = "condition"
)

// categories in the order a plan lists them.
var categories = []string{catRefused, catListener, catRoute, catCertificate, catNamespace, catObject, catResource, catCondition}

// What happens to it.
const (
	actAdded   = "added"
	actRemoved = "removed"
	actRenamed = "renamed"
	actChanged = "changed"
	// actReissued: a Certificate whose name or DNS names change, which
	// cert-manager orders anew from the ACME server.
	actReissued = "reissued"
	actLost     = "loses its listener"
	actGained   = "gains a listener"
)

// A change is one thing the new build would change against what is live.
type change struct {
	Category string `json:"category"`
	Action   string `json:"action"`
	// Name is what changes: a listener, a route and hostname, a
	// Certificate, a namespace and label, a composed resource, a condition.
	Name   string `json:"name"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Served bool   `json:"served"`
}

func (c change) String() string {
	s := fmt.Sprintf("%-11s %-18s %s", c.Category, c.Action, c.Name)
	switch {
	case c.From != "" && c.To != "":
		s += ": " + c.From + " → " + c.To
	case c.From != "":
		s += ": was " + c.From
	case c.To != "":
		s += ": " + c.To
	}
	return s
}

// diff compares what one run composed (rsp) with what is live (the
// request's observed state).
func diff(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) []change {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			// Crossplane keeps what is composed and reports Synced=False.
			return []change{{Category: catRefused, Action: "refused", Name: "the function refuses it", To: text.Truncate(r.GetMessage()), Served: true}}
		}
	}
	observed, desired := structs(req.GetObserved().GetResources()), structs(rsp.GetDesired().GetResources())
	out := slices.Concat(
		listenerChanges(observed[gateway.KeyGateway], desired[gateway.KeyGateway]),
		routeChanges(req.GetObserved().GetComposite().GetResource(), rsp.GetDesired().GetComposite().GetResource(), observed[gateway.KeyGateway], desired[gateway.KeyGateway]),
		certificateChanges(observed, desired),
		resourceChanges(observed, desired),
		conditionChanges(req.GetObserved().GetComposite().GetResource(), rsp.GetConditions()),
	)
	sortChanges(out)
	return out
}

func structs(rs map[string]*fnv1.Resource) map[string]map[string]any {
	out := make(map[string]map[string]any, len(rs))
	for k, r := range rs {
		out[k] = r.GetResource().AsMap()
	}
	return out
}

// sortChanges orders changes by category, then name, then action.
func sortChanges(cs []change) {
	rank := map[string]int{}
	for i, c := range categories {
		rank[c] = i
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if rank[a.Category] != rank[b.Category] {
			return rank[a.Category] < rank[b.Category]
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Action < b.Action
	})
}

// at walks a path of object keys.
func at(o any, path ...string) any {
	for _, k := range path {
		m, ok := o.(map[string]any)
		if !ok {
			return nil
		}
		o = m[k]
	}
	return o
}

func stringAt(o any, path ...string) string { s, _ := at(o, path...).(string); return s }

func items(o any, path ...string) []map[string]any {
	l, _ := at(o, path...).([]any)
	out := make([]map[string]any, 0, len(l))
	for _, v := range l {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func strs(o any, path ...string) []string {
	l, _ := at(o, path...).([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// listener is one listener of a Gateway.
type listener struct {
	name, hostname, protocol string
	port                     float64
	spec                     map[string]any
}

// id is what a listener serves: a renamed listener serves the same.
func (l listener) id() string { return fmt.Sprintf("%s %s:%g", l.protocol, l.hostname, l.port) }

func (l listener) String() string {
	h := l.hostname
	if h == "" {
		h = "any hostname"
	}
	return fmt.Sprintf("%s %s port %g", l.protocol, h, l.port)
}

func listenersOf(gw map[string]any) []listener {
	ls := items(gw, "spec", "listeners")
	out := make([]listener, 0, len(ls))
	for _, m := range ls {
		port, _ := m["port"].(float64)
		out = append(out, listener{name: stringAt(m, "name"), hostname: stringAt(m, "hostname"), protocol: stringAt(m, "protocol"), port: port, spec: m})
	}
	return out
}

// listenerChanges: listeners added, removed, renamed (what they serve kept
// under another name: the controller reprograms them) or changed.
//
//nolint:gocyclo // One case per way a listener changes: added, removed, renamed, changed.
func listenerChanges(observed, desired map[string]any) []change {
	if desired == nil {
		return nil
	}
	before, after := map[string]listener{}, map[string]listener{}
	for _, l := range listenersOf(observed) {
		before[l.name] = l
	}
	for _, l := range listenersOf(desired) {
		after[l.name] = l
	}
	var out []change
	renamedFrom := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(after)) {
		l := after[name]
		if b, ok := before[name]; ok {
			if d := differences(l.spec, b.spec, ""); len(d) > 0 {
				out = append(out, change{Category: catListener, Action: actChanged, Name: name, To: boundedPaths(d), Served: true})
			}
			continue
		}
		var old string
		for _, bn := range slices.Sorted(maps.Keys(before)) {
			if _, kept := after[bn]; !kept && !renamedFrom[bn] && before[bn].id() == l.id() {
				old = bn
				break
			}
		}
		if old != "" {
			renamedFrom[old] = true
			out = append(out, change{Category: catListener, Action: actRenamed, Name: l.String(), From: old, To: name, Served: true})
			continue
		}
		out = append(out, change{Category: catListener, Action: actAdded, Name: name, To: l.String(), Served: true})
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, kept := after[name]; !kept && !renamedFrom[name] {
			out = append(out, change{Category: catListener, Action: actRemoved, Name: name, From: before[name].String(), Served: true})
		}
	}
	return out
}

// servedStates are the hostname states in which a route is served.
var servedStates = map[string]bool{
	string(v1alpha1.HostnameListening): true, string(v1alpha1.HostnameCovered): true, string(v1alpha1.HostnamePassthrough): true,
}

// routeChanges: routes whose hostname would lose, gain or change its
// listener, from the TenantGateway's status (which routes it serves, live
// and composed) and the Gateway's listeners (which listener serves each
// hostname).
func routeChanges(observedXR, desiredXR *structpb.Struct, observedGW, desiredGW map[string]any) []change {
	if desiredGW == nil {
		return nil
	}
	served := func(xr *structpb.Struct, gw map[string]any) map[string]string {
		out := map[string]string{}
		for _, h := range items(xr.AsMap(), "status", "hostnames") {
			if servedStates[stringAt(h, "state")] {
				route, host := stringAt(h, "route"), stringAt(h, "hostname")
				out[route+" "+host] = listenerFor(listenersOf(gw), route, host)
			}
		}
		return out
	}
	before, after := served(observedXR, observedGW), served(desiredXR, desiredGW)
	var out []change
	for _, k := range slices.Sorted(maps.Keys(union(before, after))) {
		b, a := before[k], after[k]
		switch {
		case a == b:
		case a == "":
			out = append(out, change{Category: catRoute, Action: actLost, Name: k, From: b, Served: true})
		case b == "":
			out = append(out, change{Category: catRoute, Action: actGained, Name: k, To: a, Served: true})
		default:
			out = append(out, change{Category: catRoute, Action: actChanged, Name: k, From: b, To: a, Served: true})
		}
	}
	return out
}

// listenerFor is the listener that serves a route's hostname: of the
// route's protocol (TLS for a TLSRoute, HTTPS for the others), with the
// hostname itself, else the longest wildcard that covers it.
func listenerFor(ls []listener, route, host string) string {
	protocol := "HTTPS"
	if strings.HasPrefix(route, gateway.KindTLSRoute+"/") {
		protocol = "TLS"
	}
	best, bestLen := "", -1
	for _, l := range ls {
		if l.protocol != protocol || l.hostname == "" {
			continue
		}
		switch {
		case l.hostname == host:
			return l.name
		case strings.HasPrefix(l.hostname, "*.") && strings.HasSuffix(host, l.hostname[1:]) && len(l.hostname) > bestLen:
			best, bestLen = l.name, len(l.hostname)
		}
	}
	return best
}

// certificate is a Certificate's name and DNS names.
type certificate struct {
	name     string
	dnsNames []string
}

func certificatesOf(rs map[string]map[string]any) map[string]certificate {
	out := map[string]certificate{}
	for k, o := range rs {
		if stringAt(o, "kind") != "Certificate" {
			continue
		}
		names := strs(o, "spec", "dnsNames")
		slices.Sort(names)
		out[k] = certificate{name: stringAt(o, "metadata", "name"), dnsNames: names}
	}
	return out
}

// certificateChanges: Certificates added, removed, or whose name or DNS
// names change; cert-manager orders each of them from the ACME server.
//
//nolint:gocyclo // One case per way a Certificate is ordered anew: added, renamed, names changed.
func certificateChanges(observed, desired map[string]map[string]any) []change {
	before, after := certificatesOf(observed), certificatesOf(desired)
	var out []change
	matched := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		a := after[k]
		b, ok := before[k]
		if !ok {
			// The same DNS names under another key: a rename.
			for _, bk := range slices.Sorted(maps.Keys(before)) {
				if _, kept := after[bk]; !kept && !matched[bk] && slices.Equal(before[bk].dnsNames, a.dnsNames) {
					b, ok = before[bk], true
					matched[bk] = true
					break
				}
			}
		}
		switch {
		case !ok:
			out = append(out, change{Category: catCertificate, Action: actAdded, Name: a.name, To: strings.Join(a.dnsNames, ", ") + " (a new ACME order)", Served: true})
		case b.name != a.name || !slices.Equal(b.dnsNames, a.dnsNames):
			out = append(out, change{Category: catCertificate, Action: actReissued, Name: a.name, From: b.name + " " + strings.Join(b.dnsNames, ", "), To: a.name + " " + strings.Join(a.dnsNames, ", ") + " (a new ACME order)", Served: true})
		}
		matched[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if _, kept := after[k]; !kept && !matched[k] {
			out = append(out, change{Category: catCertificate, Action: actRemoved, Name: before[k].name, From: strings.Join(before[k].dnsNames, ", "), Served: true})
		}
	}
	return out
}

// resourceChanges: every other composed resource added, removed or
// changed. A provider-kubernetes Object whose manifest is a Namespace is
// a namespace patch: its labels and annotations are listed one by one.
// A field is compared only where the new build sets it: the API server
// and controllers default and add the rest.
//
//nolint:gocyclo // One case per kind of composed resource and per way it changes, read in one pass.
func resourceChanges(observed, desired map[string]map[string]any) []change {
	var out []change
	for _, k := range slices.Sorted(maps.Keys(union(observed, desired))) {
		o, d := observed[k], desired[k]
		kind := stringAt(d, "kind")
		if d == nil {
			kind = stringAt(o, "kind")
		}
		if kind == "Certificate" || k == gateway.KeyGateway {
			continue
		}
		if manifest := at(d, "spec", "forProvider", "manifest"); kind == "Object" && stringAt(manifest, "kind") == "Namespace" || d == nil && stringAt(at(o, "spec", "forProvider", "manifest"), "kind") == "Namespace" {
			out = append(out, namespaceChanges(at(o, "spec", "forProvider", "manifest"), manifest)...)
			continue
		}
		if kind == "Namespace" {
			// A composed namespace: its marks as the Object's above, other
			// labels (Kubernetes' own, Crossplane's) left alone.
			out = append(out, namespaceChanges(o, d)...)
			continue
		}
		cat := catResource
		if kind == "Object" {
			cat = catObject
		}
		name := fmt.Sprintf("%s %s", kind, qualified(d, o))
		switch {
		case o == nil:
			out = append(out, change{Category: cat, Action: actAdded, Name: name, Served: true})
		case d == nil:
			out = append(out, change{Category: cat, Action: actRemoved, Name: name, Served: true})
		default:
			diffs := make([]string, 0, 8)
			for _, f := range []string{"spec", "data", "stringData"} {
				diffs = append(diffs, differences(at(d, f), at(o, f), f)...)
			}
			for _, f := range []string{"labels", "annotations"} {
				diffs = append(diffs, differences(at(d, "metadata", f), at(o, "metadata", f), "metadata."+f)...)
			}
			if len(diffs) > 0 {
				out = append(out, change{Category: cat, Action: actChanged, Name: name, To: boundedPaths(diffs), Served: true})
			}
		}
	}
	return out
}

// qualified is namespace/name of the first object that is there.
func qualified(objs ...map[string]any) string {
	for _, o := range objs {
		if o == nil {
			continue
		}
		if ns := stringAt(o, "metadata", "namespace"); ns != "" {
			return ns + "/" + stringAt(o, "metadata", "name")
		}
		return stringAt(o, "metadata", "name")
	}
	return ""
}

// namespaceChanges lists a namespace's labels and annotations the new
// build adds, removes or changes: an observed Object's manifest is what
// the last build desired, so a mark it has and the new one does not is
// removed; on a composed Namespace only marks the new build sets count.
//
//nolint:gocyclo // Labels and annotations, each added, removed or changed, on an Object's manifest or a Namespace.
func namespaceChanges(observed, desired any) []change {
	ns := stringAt(desired, "metadata", "name")
	if ns == "" {
		ns = stringAt(observed, "metadata", "name")
	}
	var out []change
	for _, f := range []string{"labels", "annotations"} {
		b, _ := at(observed, "metadata", f).(map[string]any)
		a, _ := at(desired, "metadata", f).(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(union(b, a))) {
			bv, had := b[k].(string)
			av, has := a[k].(string)
			name := fmt.Sprintf("Namespace %s %s %s", ns, f[:len(f)-1], k)
			switch {
			case has && !had:
				out = append(out, change{Category: catNamespace, Action: actAdded, Name: name, To: av, Served: true})
			case had && !has && desired != nil && stringAt(observed, "kind") != "Namespace" || had && desired == nil:
				out = append(out, change{Category: catNamespace, Action: actRemoved, Name: name, From: bv, Served: true})
			case has && av != bv:
				out = append(out, change{Category: catNamespace, Action: actChanged, Name: name, From: bv, To: av, Served: true})
			}
		}
	}
	return out
}

// conditionChanges: the conditions the function sets whose status, reason
// or message differ from the XR's.
func conditionChanges(xr *structpb.Struct, conds []*fnv1.Condition) []change {
	live := map[string]map[string]any{}
	for _, c := range items(xr.AsMap(), "status", "conditions") {
		live[stringAt(c, "type")] = c
	}
	var out []change
	for _, c := range conds {
		status := strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_")
		status = strings.ToUpper(status[:1]) + strings.ToLower(status[1:])
		to := status + " " + c.GetReason()
		l, ok := live[c.GetType()]
		if !ok {
			out = append(out, change{Category: catCondition, Action: actAdded, Name: c.GetType(), To: to})
			continue
		}
		from := stringAt(l, "status") + " " + stringAt(l, "reason")
		switch {
		case from != to:
			out = append(out, change{Category: catCondition, Action: actChanged, Name: c.GetType(), From: from, To: to})
		case stringAt(l, "message") != c.GetMessage():
			out = append(out, change{Category: catCondition, Action: actChanged, Name: c.GetType() + " message", From: text.Truncate(stringAt(l, "message")), To: text.Truncate(c.GetMessage())})
		}
	}
	return out
}

// differences lists the paths at which desired sets a value observed does
// not have: maps compared key by key where desired has the key, lists item
// by item.
func differences(desired, observed any, path string) []string {
	switch d := desired.(type) {
	case nil:
		return nil
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			return []string{orRoot(path)}
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(d)) {
			out = append(out, differences(d[k], o[k], join(path, k))...)
		}
		return out
	case []any:
		o, ok := observed.([]any)
		if !ok || len(o) != len(d) {
			return []string{orRoot(path)}
		}
		var out []string
		for i := range d {
			out = append(out, differences(d[i], o[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(desired, observed) {
			return []string{orRoot(path)}
		}
		return nil
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// maxPaths bounds the fields a change names.
const maxPaths = 5

func boundedPaths(paths []string) string {
	return text.BoundedList("fields ", paths[:min(len(paths), maxPaths)], ", ", more(len(paths)-maxPaths))
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

func union[V any](a, b map[string]V) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
