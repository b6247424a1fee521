package fn

import (
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-tenant-gateway/fn/acme"
	"github.com/cozystack/function-tenant-gateway/fn/gateway"
	"github.com/cozystack/function-tenant-gateway/fn/kube"
	"github.com/cozystack/function-tenant-gateway/fn/tenant"
)

// What the function reads of the composed resources Crossplane observed, in
// one place. Every observed resource arrives in every request, and the
// function reads a few fields of each: the codec keeps them as bytes (see
// Lazy decoding in docs/design.md) and these readers take only the fields
// named here, through views, whichever way the request was decoded. To read
// one more field, read it here from the resource's view.

// observeComposed reads the conditions of every composed resource Crossplane
// observed, by composition resource name.
func observeComposed(req *fnv1.RunFunctionRequest) map[string]*kube.ObservedResource {
	out := map[string]*kube.ObservedResource{}
	for key, r := range req.GetObserved().GetResources() {
		v := resourceView(r)
		o := observedConditions(v.at("status", "conditions"))
		o.Name = v.at(keyMetadata, "name").str()
		out[key] = o
	}
	return out
}

// observedResource is the view of the composed resource observed under key
// (an empty one when there is none).
func observedResource(req *fnv1.RunFunctionRequest, key string) view {
	return resourceView(req.GetObserved().GetResources()[key])
}

// observeGatewayComposed is observeComposed with what the computation reads
// of the composed Certificates, order-ledger Object and Gateway besides
// their conditions: the Certificates' dnsNames, the record the Object was
// applied with, the Gateway's listeners and their conditions.
func observeGatewayComposed(req *fnv1.RunFunctionRequest) map[string]*kube.ObservedResource {
	out := observeComposed(req)
	if o := out[gateway.KeyCertificateWildcard]; o != nil {
		o.DNSNames = observedDNSNames(req, gateway.KeyCertificateWildcard)
	}
	for key, o := range out {
		if gateway.IsHostCertificateKey(key) {
			o.DNSNames = observedDNSNames(req, key)
		}
	}
	if o := out[gateway.KeyOrderLedger]; o != nil {
		o.Record = observedRecord(req)
	}
	if o := out[gateway.KeyGateway]; o != nil {
		s := observedResource(req, gateway.KeyGateway)
		o.ListenerHostnames = map[string]string{}
		for _, v := range s.at(keySpec, "listeners").list() {
			l := v.object()
			if n := l.get("name").str(); n != "" {
				o.ListenerNames = append(o.ListenerNames, n)
				o.ListenerHostnames[n] = l.get("hostname").str()
			}
		}
		o.Listeners = map[string]map[string]string{}
		o.Generation = int64(s.at(keyMetadata, "generation").number())
		o.StatusGenerations = observedGenerations(s.at("status", "conditions"))
		o.ListenerGenerations = map[string]int64{}
		for _, v := range s.at("status", "listeners").list() {
			l := v.object()
			name := l.get("name").str()
			cs := l.get("conditions")
			o.Listeners[name] = conditions(cs)
			for _, g := range observedGenerations(cs) {
				if old, ok := o.ListenerGenerations[name]; !ok || g < old {
					o.ListenerGenerations[name] = g
				}
			}
		}
	}
	return out
}

// observedRecord is the order ledger's record the Object was last applied
// with, whether or not provider-kubernetes has written it yet; one that
// does not decode is none, so that no order is granted on it.
func observedRecord(req *fnv1.RunFunctionRequest) *acme.OrderRecord {
	m := observedResource(req, gateway.KeyOrderLedger).at(keySpec, "forProvider", "manifest").object()
	rec, err := gateway.DecodeLedgerRecord(stringMap(m.get("data")))
	if err != nil {
		return nil
	}
	return &rec
}

// observedDNSNames are the spec dnsNames of the Certificate observed under
// key.
func observedDNSNames(req *fnv1.RunFunctionRequest, key string) []string {
	names := observedResource(req, key).at(keySpec, "dnsNames").list()
	out := make([]string, 0, len(names))
	for _, v := range names {
		out = append(out, v.str())
	}
	return out
}

// observedGenerations maps each condition type of a conditions list to the
// observedGeneration its controller wrote with it, where it wrote one.
func observedGenerations(v val) map[string]int64 {
	out := map[string]int64{}
	for _, c := range v.list() {
		s := c.object()
		if g := s.get("observedGeneration").number(); g > 0 {
			out[s.get("type").str()] = int64(g)
		}
	}
	return out
}

// observedReplica is the Secret of the listeners' name in the tenant
// namespace as the replica holder Object observed it, nil until it has. The
// provider redacts the Secret's data in that status (--sanitize-secrets);
// only the labels are read.
func observedReplica(req *fnv1.RunFunctionRequest) *tenant.ObservedSecret {
	m := observedResource(req, tenant.KeyReplica).at("status", "atProvider", "manifest")
	if !m.isObject() {
		return nil
	}
	return &tenant.ObservedSecret{Labels: stringMap(m.object().at("metadata", "labels"))}
}

// observedGatewayConditions are the conditions of the tenant's
// TenantGateway as provider-kubernetes observed it in its Object.
func observedGatewayConditions(req *fnv1.RunFunctionRequest) []xpv2.Condition {
	return conditionList(observedResource(req, tenant.KeyTenantGateway).at("status", "atProvider", "manifest", "status", "conditions"))
}

// conditions maps each condition type in a conditions list to its status.
func conditions(v val) map[string]string {
	return observedConditions(v).Conditions
}

// observedConditions maps each condition type in a conditions list to its
// status, its reason and its message.
func observedConditions(v val) *kube.ObservedResource {
	cs := conditionList(v)
	o := &kube.ObservedResource{
		Conditions: make(map[string]string, len(cs)),
		Reasons:    make(map[string]string, len(cs)),
		Messages:   make(map[string]string, len(cs)),
	}
	for _, c := range cs {
		t := string(c.Type)
		o.Conditions[t], o.Reasons[t], o.Messages[t] = string(c.Status), string(c.Reason), c.Message
	}
	return o
}

// conditionList reads a conditions list into typed conditions, in order.
func conditionList(v val) []xpv2.Condition {
	values := v.list()
	out := make([]xpv2.Condition, 0, len(values))
	for _, c := range values {
		s := c.object()
		out = append(out, xpv2.Condition{
			Type: xpv2.ConditionType(s.get("type").str()), Status: corev1.ConditionStatus(s.get("status").str()),
			Reason: xpv2.ConditionReason(s.get("reason").str()), Message: s.get("message").str(),
		})
	}
	return out
}
