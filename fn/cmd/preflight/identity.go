package main

import (
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// writerPolicy is the admission policy (examples/cluster/admission-policies.yaml)
// that judges the takeover's writes: resuming a TenantGateway and handing
// its status over, in tenant-* namespaces.
const (
	writerPolicy    = "tenantgateway-writer-policy"
	tenantNSPrefix  = "tenant-"
	keyTrustedUsers = "users"
	keyTrustedGroup = "groups"
)

// checkIdentity judges who the takeover runs as (the pre-flight's own
// credentials, which the script shares) against the installed policies:
// once tenantgateway-writer-policy is bound, only the trusted callers may
// write a TenantGateway in a tenant-* namespace.
func checkIdentity(s *snapshot, o options, r *report) {
	var judged []string
	for _, t := range s.TenantGateways {
		if strings.HasPrefix(t.Namespace, tenantNSPrefix) && o.judged(&t) {
			judged = append(judged, t.Namespace+"/"+t.Name)
		}
	}
	bound := slices.ContainsFunc(s.Bindings, func(b admissionv1.ValidatingAdmissionPolicyBinding) bool { return b.Spec.PolicyName == writerPolicy })
	switch {
	case !bound:
		r.add(info, topicIdentity, "%s is not bound: no admission policy of this project judges the takeover's writes", writerPolicy)
		return
	case len(judged) == 0:
		r.add(info, topicIdentity, "no TenantGateway is in a %s* namespace: %s judges none of the takeover's writes", tenantNSPrefix, writerPolicy)
		return
	case s.Identity == nil:
		r.add(warning, topicIdentity, "the API server did not say who the takeover runs as (SelfSubjectReview): it must be a trusted caller of EnvironmentConfig %s to resume %s", o.TrustedCallers, strings.Join(judged, ", "))
		return
	}
	env := s.Environments[o.TrustedCallers]
	if env == nil {
		r.add(blocker, topicIdentity, "%s is bound but EnvironmentConfig %s does not exist: every write of a TenantGateway in a %s* namespace is denied, the takeover's included", writerPolicy, o.TrustedCallers, tenantNSPrefix)
		return
	}
	users, groups := stringsAt(env, keyTrustedUsers), stringsAt(env, keyTrustedGroup)
	id := s.Identity
	if slices.Contains(users, id.Username) || slices.ContainsFunc(id.Groups, func(g string) bool { return slices.Contains(groups, g) }) {
		r.add(info, topicIdentity, "the takeover runs as %s (groups %s), a trusted caller of %s", id.Username, strings.Join(id.Groups, ", "), o.TrustedCallers)
		return
	}
	r.add(blocker, topicIdentity, "the takeover runs as %s (groups %s), not a trusted caller of EnvironmentConfig %s: %s denies resuming %s; run it as a listed user or group, or add this one to data.users or data.groups first",
		id.Username, strings.Join(id.Groups, ", "), o.TrustedCallers, writerPolicy, strings.Join(judged, ", "))
}

// stringsAt is the list of strings at data.<key> of an EnvironmentConfig.
func stringsAt(u *unstructured.Unstructured, key string) []string {
	l, _, _ := unstructured.NestedStringSlice(u.Object, "data", key)
	return l
}
