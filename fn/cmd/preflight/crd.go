package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Helm's marks on what a release owns, and the annotation that keeps a
// resource when the release stops rendering it or is uninstalled.
const (
	labelManagedBy       = "app.kubernetes.io/managed-by"
	annotationRelease    = "meta.helm.sh/release-name"
	annotationReleaseNS  = "meta.helm.sh/release-namespace"
	annotationPolicy     = "helm.sh/resource-policy"
	policyKeep           = "keep"
	labelHelmName        = "name"
	labelHelmOwner       = "owner"
	labelHelmStatus      = "status"
	helmStatusDeployed   = "deployed"
	labelHelmVersion     = "version"
	kindXRD              = "CompositeResourceDefinition"
	maxManifestBytes     = 64 << 20
	helmDefaultNamespace = "cozy-system"
)

// checkCRD reports who owns the TenantGateway CRD and whether Helm can
// still delete it or take it back: the live object's marks (Helm deletes
// a resource it stops rendering unless the live object says keep) and the
// last manifest of its release (helm uninstall deletes what the manifest
// lists unless the manifest says keep; an upgrade that still renders it
// applies it again, with no ownership check since the last manifest has
// it: Helm's marks, and the chart's schema over the XRD's).
func checkCRD(s *snapshot, o options, r *report) {
	if s.CRD == nil {
		r.add(info, topicCRD, "CRD %s does not exist", crdTenantGateways)
		return
	}
	name, ns := s.CRD.GetAnnotations()[annotationRelease], s.CRD.GetAnnotations()[annotationReleaseNS]
	keep := s.CRD.GetAnnotations()[annotationPolicy] == policyKeep
	switch ref := metav1.GetControllerOfNoCopy(s.CRD); {
	case ref != nil && ref.Kind == kindXRD:
		r.add(info, topicCRD, "CRD %s is controlled by the XRD %s", crdTenantGateways, ref.Name)
	case name != "" && !keep:
		r.add(blocker, topicCRD, "CRD %s belongs to Helm release %s/%s without %s=%s: an upgrade that stops rendering it, or an uninstall, deletes it and every TenantGateway (and, by garbage collection, every Gateway, Issuer and Certificate); run `hack/migrate-from-cozystack.sh prepare`",
			crdTenantGateways, ns, name, annotationPolicy, policyKeep)
	case name != "":
		r.add(info, topicCRD, "CRD %s belongs to Helm release %s/%s and carries %s=%s", crdTenantGateways, ns, name, annotationPolicy, policyKeep)
	default:
		r.add(info, topicCRD, "CRD %s carries no Helm release marks", crdTenantGateways)
	}
	if name == "" {
		name, ns = o.ControllerName, helmDefaultNamespace
	}
	checkRelease(s, ns, name, r)
}

// checkRelease reads the last deployed revision of a Helm release and
// reports whether its manifest still renders the CRD.
func checkRelease(s *snapshot, ns, name string, r *report) {
	sec := lastRelease(s.HelmReleases, ns, name)
	if sec == nil {
		r.add(info, topicCRD, "no deployed Helm release %s/%s (Helm keeps releases in Secrets of type %s)", ns, name, helmReleaseType)
		return
	}
	manifest, err := releaseManifest(sec)
	if err != nil {
		r.add(warning, topicCRD, "cannot read Helm release %s/%s from Secret %s: %v", ns, name, sec.Name, err)
		return
	}
	doc, ok := crdDocument(manifest)
	switch {
	case !ok:
		r.add(info, topicCRD, "Helm release %s/%s (revision %s) no longer renders CRD %s", ns, name, sec.Labels[labelHelmVersion], crdTenantGateways)
	case doc.GetAnnotations()[annotationPolicy] != policyKeep && suspended(s, ns, name):
		r.add(warning, topicCRD, "Helm release %s/%s (revision %s) still renders CRD %s without %s=%s in its manifest, and its HelmRelease is suspended: never uninstall the release (that deletes the CRD with every TenantGateway) nor delete that HelmRelease (cozystack-operator re-creates it unsuspended, and Flux upgrades the release at once), and resume it only with a chart that no longer renders the CRD (docs/migration.md)",
			ns, name, sec.Labels[labelHelmVersion], crdTenantGateways, annotationPolicy, policyKeep)
	case doc.GetAnnotations()[annotationPolicy] != policyKeep:
		r.add(blocker, topicCRD, "Helm release %s/%s (revision %s) still renders CRD %s without %s=%s in its manifest: `helm uninstall` deletes it with every TenantGateway, and each upgrade of the release applies it again (Helm's marks, and the chart's schema over the XRD's); upgrade the release to a chart without the CRD first (docs/migration.md)",
			ns, name, sec.Labels[labelHelmVersion], crdTenantGateways, annotationPolicy, policyKeep)
	default:
		r.add(warning, topicCRD, "Helm release %s/%s (revision %s) still renders CRD %s (with %s=%s): each upgrade of the release applies it again (Helm's marks, and the chart's schema over the XRD's)",
			ns, name, sec.Labels[labelHelmVersion], crdTenantGateways, annotationPolicy, policyKeep)
	}
}

// suspended reports whether the Flux HelmRelease of that name and
// namespace (Cozystack names each after its release) is suspended: Flux
// then neither upgrades nor uninstalls the release.
func suspended(s *snapshot, ns, name string) bool {
	for _, hr := range s.FluxReleases {
		if hr.GetNamespace() == ns && hr.GetName() == name {
			v, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend")
			return v
		}
	}
	return false
}

// lastRelease is the deployed revision of the release with the highest
// version, nil when there is none.
func lastRelease(secrets []corev1.Secret, ns, name string) *corev1.Secret {
	var best *corev1.Secret
	bestV := -1
	for i := range secrets {
		sec := &secrets[i]
		l := sec.Labels
		if sec.Namespace != ns || l[labelHelmOwner] != "helm" || l[labelHelmName] != name || l[labelHelmStatus] != helmStatusDeployed {
			continue
		}
		if v, err := strconv.Atoi(l[labelHelmVersion]); err == nil && v > bestV {
			best, bestV = sec, v
		}
	}
	return best
}

// releaseManifest decodes Helm's release record: the Secret's data holds
// base64 of the gzipped JSON release, whose manifest field is the YAML
// Helm applied.
func releaseManifest(sec *corev1.Secret) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(string(sec.Data[keyHelmReleaseData]))
	if err != nil {
		return "", fmt.Errorf("cannot decode the release record: %w", err)
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		z, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return "", fmt.Errorf("cannot decompress the release record: %w", err)
		}
		raw, err = io.ReadAll(io.LimitReader(z, maxManifestBytes))
		if err != nil {
			return "", fmt.Errorf("cannot decompress the release record: %w", err)
		}
	}
	var rel struct {
		Manifest string `json:"manifest"`
	}
	if err := json.Unmarshal(raw, &rel); err != nil {
		return "", fmt.Errorf("cannot parse the release record: %w", err)
	}
	return rel.Manifest, nil
}

// crdDocument finds the TenantGateway CRD among a manifest's documents.
func crdDocument(manifest string) (*unstructured.Unstructured, bool) {
	for _, d := range strings.Split(manifest, "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil || u.Object == nil {
			continue
		}
		if u.GetKind() == kindCRD && u.GetName() == crdTenantGateways {
			return u, true
		}
	}
	return nil, false
}
