package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// fixture reads testdata/platform.yaml and the Helm release record of the
// controller's chart, whose manifest renders the CRD as the chart does.
func fixture(t *testing.T, edit func([]unstructured.Unstructured) []unstructured.Unstructured, upgraded bool) *snapshot {
	t.Helper()
	b, err := os.ReadFile("testdata/platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var objs []unstructured.Unstructured
	for _, d := range strings.Split(string(b), "\n---\n") {
		u := unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatalf("cannot parse a fixture document: %v\n%s", err, d)
		}
		if u.Object != nil {
			objs = append(objs, u)
		}
	}
	crd := "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: tenantgateways.gateway.cozystack.io\n"
	objs = append(objs, helmRelease(t, "cozy-system", "cozystack-controller", 7, crd))
	if edit != nil {
		objs = edit(objs)
	}
	if upgraded {
		// The chart upgraded to a revision without the CRD: revision 7 is
		// superseded, and a later upgrade that did not complete (still
		// rendering the CRD) is not what Helm has applied.
		for i := range objs {
			if objs[i].GetName() == "sh.helm.release.v1.cozystack-controller.v7" {
				l := objs[i].GetLabels()
				l[labelHelmStatus] = "superseded"
				objs[i].SetLabels(l)
			}
		}
		pending := helmRelease(t, "cozy-system", "cozystack-controller", 9, crd)
		l := pending.GetLabels()
		l[labelHelmStatus] = "pending-upgrade"
		pending.SetLabels(l)
		objs = append(objs, pending, helmRelease(t, "cozy-system", "cozystack-controller", 8, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n"))
	}
	s, err := newSnapshot(objs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// helmRelease is Helm's record of a deployed revision: a Secret whose
// release key holds base64 of the gzipped JSON release.
func helmRelease(t *testing.T, ns, name string, version int, manifest string) unstructured.Unstructured {
	t.Helper()
	js, _ := json.Marshal(map[string]any{"name": name, "namespace": ns, "version": version, "manifest": manifest})
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = w.Write(js)
	_ = w.Close()
	sec := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kindSecret},
		Type:     helmReleaseType,
		Data:     map[string][]byte{keyHelmReleaseData: []byte(base64.StdEncoding.EncodeToString(z.Bytes()))},
	}
	v := strconv.Itoa(version)
	sec.Name, sec.Namespace = "sh.helm.release.v1."+name+".v"+v, ns
	sec.Labels = map[string]string{labelHelmOwner: "helm", labelHelmName: name, labelHelmStatus: helmStatusDeployed, labelHelmVersion: v}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sec)
	if err != nil {
		t.Fatal(err)
	}
	return unstructured.Unstructured{Object: u}
}

// TestPreflightReport: on a platform shaped like Cozystack's, every
// finding of the migration issue is reported, each naming what it is
// about, and the blockers stop the takeover; once each is resolved the
// pre-flight lets it start.
func TestPreflightReport(t *testing.T) {
	cases := map[string]struct {
		reason string
		edit   func([]unstructured.Unstructured) []unstructured.Unstructured
		only   string
		// upgraded: the controller's chart has a revision without the CRD.
		upgraded bool
		want     []string
	}{
		"OnlyTenantX": {
			reason: "a takeover of tenant-x is judged on tenant-x's own findings, the CRD, the controller and the identity",
			only:   "tenant-x/cozystack",
			want: []string{
				`WARNING attached namespaces: namespace cozy-dashboard is attached by 2 TenantGateways (tenant-root/cozystack, tenant-x/cozystack): only the owner its gateway label names admits it once the function runs; attach it to one of them (the platform's gateway.attachedNamespaces value goes to every gateway-owning tenant)`,
				`WARNING attached namespaces: namespace default is attached by 2 TenantGateways (tenant-root/cozystack, tenant-x/cozystack): only the owner its gateway label names admits it once the function runs; attach it to one of them (the platform's gateway.attachedNamespaces value goes to every gateway-owning tenant)`,
				`OK hostname winners: TenantGateway tenant-x/cozystack: every hostname keeps the route that serves it (0 claimed)`,
				`OK TenantGateway specs: TenantGateway tenant-x/cozystack is accepted by the function`,
				`BLOCKER identity: the takeover runs as oidc:alice (groups oidc:cozystack-cluster-admin, system:authenticated), not a trusted caller of EnvironmentConfig tenant-gateway-trusted-callers: tenantgateway-writer-policy denies resuming tenant-x/cozystack; run it as a listed user or group, or add this one to data.users or data.groups first`,
				"BLOCKER CRD ownership: CRD tenantgateways.gateway.cozystack.io belongs to Helm release cozy-system/cozystack-controller without helm.sh/resource-policy=keep: an upgrade that stops rendering it, or an uninstall, deletes it and every TenantGateway (and, by garbage collection, every Gateway, Issuer and Certificate); run `hack/migrate-from-cozystack.sh prepare`",
				"BLOCKER CRD ownership: Helm release cozy-system/cozystack-controller (revision 7) still renders CRD tenantgateways.gateway.cozystack.io without helm.sh/resource-policy=keep in its manifest: `helm uninstall` deletes it with every TenantGateway, and each upgrade of the release applies it again (Helm's marks, and the chart's schema over the XRD's); upgrade the release to a chart without the CRD first (docs/migration.md)",
				`BLOCKER controller: Deployment cozy-system/cozystack-controller runs (1 replicas wanted, 1 present): its TenantGateway reconciler rewrites every Gateway Crossplane applies (its ownership check compares the uid only); stop it first (docs/migration.md, step 3)`,
				`BLOCKER controller: HelmRelease cozy-system/cozystack-controller is not suspended: Flux's next upgrade of the release (every platform upgrade brings a new chart) restores replicas: 1 and applies the chart's CRD again; suspend it first (docs/migration.md)`,
			},
		},
		"Suspended": {
			reason: "the interim procedure: the controller stopped and its HelmRelease suspended, the CRD kept, while the chart still renders it",
			edit: func(objs []unstructured.Unstructured) []unstructured.Unstructured {
				var out []unstructured.Unstructured
				for _, u := range objs {
					switch u.GetKind() {
					case "TenantGateway", "HTTPRoute", "Namespace":
						continue
					case "Deployment":
						_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "replicas")
						_ = unstructured.SetNestedField(u.Object, int64(0), "status", "replicas")
					case "HelmRelease":
						_ = unstructured.SetNestedField(u.Object, true, "spec", "suspend")
					case "CustomResourceDefinition":
						a := u.GetAnnotations()
						a[annotationPolicy] = policyKeep
						u.SetAnnotations(a)
					}
					out = append(out, u)
				}
				return out
			},
			want: []string{
				`OK identity: no TenantGateway is in a tenant-* namespace: tenantgateway-writer-policy judges none of the takeover's writes`,
				"WARNING CRD ownership: Helm release cozy-system/cozystack-controller (revision 7) still renders CRD tenantgateways.gateway.cozystack.io without helm.sh/resource-policy=keep in its manifest, and its HelmRelease is suspended: never uninstall the release (that deletes the CRD with every TenantGateway) nor delete that HelmRelease (cozystack-operator re-creates it unsuspended, and Flux upgrades the release at once), and resume it only with a chart that no longer renders the CRD (docs/migration.md)",
				`OK CRD ownership: CRD tenantgateways.gateway.cozystack.io belongs to Helm release cozy-system/cozystack-controller and carries helm.sh/resource-policy=keep`,
				`WARNING controller: HelmRelease cozy-system/cozystack-controller is suspended: this component gets no upgrade (and no fix) until it is resumed, which must wait for a chart without the CRD and with the TenantGateway reconciler off`,
				`OK controller: Deployment cozy-system/cozystack-controller is scaled to 0 (and with it the controller's other reconcilers)`,
			},
		},
		"OnlyMissing": {
			reason:   "a takeover of a TenantGateway that does not exist is refused",
			edit:     resolve,
			upgraded: true,
			only:     "tenant-z/cozystack",
			want: []string{
				`BLOCKER TenantGateway specs: no TenantGateway tenant-z/cozystack`,
				`OK identity: no TenantGateway is in a tenant-* namespace: tenantgateway-writer-policy judges none of the takeover's writes`,
				`OK CRD ownership: CRD tenantgateways.gateway.cozystack.io belongs to Helm release cozy-system/cozystack-controller and carries helm.sh/resource-policy=keep`,
				`OK CRD ownership: Helm release cozy-system/cozystack-controller (revision 8) no longer renders CRD tenantgateways.gateway.cozystack.io`,
				`WARNING controller: HelmRelease cozy-system/cozystack-controller is suspended: this component gets no upgrade (and no fix) until it is resumed, which must wait for a chart without the CRD and with the TenantGateway reconciler off`,
				`OK controller: Deployment cozy-system/cozystack-controller is scaled to 0 (and with it the controller's other reconcilers)`,
			},
		},
		"Platform": {
			reason: "shared attached namespaces, a winner that changes, a refused spec, an untrusted identity, Helm's CRD, the controller running",
			want: []string{
				`BLOCKER attached namespaces: TenantGateway tenant-root/cozystack attaches namespace cozy-dashboard, whose label namespace.cozystack.io/gateway=tenant-x (cozystack.io/gateway-attached-by="tenant-x") names another owner: at the takeover of tenant-root the function does not admit it, so its 1 routes (HTTPRoute/cozy-dashboard/dashboard) on this Gateway stop being served`,
				`WARNING attached namespaces: TenantGateway tenant-root/cozystack attaches namespace default, whose label namespace.cozystack.io/gateway=tenant-x (cozystack.io/gateway-attached-by="tenant-x") names another owner: once tenant-root is taken over, the function does not admit it on this Gateway; no route of it names this Gateway today`,
				`WARNING attached namespaces: namespace cozy-dashboard is attached by 2 TenantGateways (tenant-root/cozystack, tenant-x/cozystack): only the owner its gateway label names admits it once the function runs; attach it to one of them (the platform's gateway.attachedNamespaces value goes to every gateway-owning tenant)`,
				`WARNING attached namespaces: namespace default is attached by 2 TenantGateways (tenant-root/cozystack, tenant-x/cozystack): only the owner its gateway label names admits it once the function runs; attach it to one of them (the platform's gateway.attachedNamespaces value goes to every gateway-owning tenant)`,
				`BLOCKER hostname winners: TenantGateway tenant-root/cozystack, app.alice.example.org: the controller serves HTTPRoute/cozy-monitoring/grafana (it ranks cozy-* namespaces first, then by name); the function serves HTTPRoute/tenant-alice/app (it ranks the namespace delegated the most specific domain first): the backend changes at the takeover`,
				`BLOCKER hostname winners: TenantGateway tenant-root/cozystack, dashboard.example.org: the controller serves HTTPRoute/cozy-dashboard/dashboard; the function serves no route for it (the function does not admit its namespace)`,
				`OK hostname winners: TenantGateway tenant-x/cozystack: every hostname keeps the route that serves it (0 claimed)`,
				`BLOCKER TenantGateway specs: TenantGateway tenant-y/cozystack is refused by the function, so its takeover stalls (Synced=False, nothing composed): invalid TenantGateway spec: spec.apex: Invalid value: "Y.example.org": must be a lowercase DNS name (labels of a-z, 0-9 and '-', separated by dots)`,
				`WARNING TenantGateway specs: TenantGateway tenant-root/cozystack: the spec repeats 1 list entries, each used once (remove the repeats): spec.attachedNamespaces[3]: "cozy-dashboard" repeats spec.attachedNamespaces[0]`,
				`OK TenantGateway specs: TenantGateway tenant-x/cozystack is accepted by the function`,
				`BLOCKER identity: the takeover runs as oidc:alice (groups oidc:cozystack-cluster-admin, system:authenticated), not a trusted caller of EnvironmentConfig tenant-gateway-trusted-callers: tenantgateway-writer-policy denies resuming tenant-root/cozystack, tenant-x/cozystack, tenant-y/cozystack; run it as a listed user or group, or add this one to data.users or data.groups first`,
				"BLOCKER CRD ownership: CRD tenantgateways.gateway.cozystack.io belongs to Helm release cozy-system/cozystack-controller without helm.sh/resource-policy=keep: an upgrade that stops rendering it, or an uninstall, deletes it and every TenantGateway (and, by garbage collection, every Gateway, Issuer and Certificate); run `hack/migrate-from-cozystack.sh prepare`",
				"BLOCKER CRD ownership: Helm release cozy-system/cozystack-controller (revision 7) still renders CRD tenantgateways.gateway.cozystack.io without helm.sh/resource-policy=keep in its manifest: `helm uninstall` deletes it with every TenantGateway, and each upgrade of the release applies it again (Helm's marks, and the chart's schema over the XRD's); upgrade the release to a chart without the CRD first (docs/migration.md)",
				`BLOCKER controller: Deployment cozy-system/cozystack-controller runs (1 replicas wanted, 1 present): its TenantGateway reconciler rewrites every Gateway Crossplane applies (its ownership check compares the uid only); stop it first (docs/migration.md, step 3)`,
				`BLOCKER controller: HelmRelease cozy-system/cozystack-controller is not suspended: Flux's next upgrade of the release (every platform upgrade brings a new chart) restores replicas: 1 and applies the chart's CRD again; suspend it first (docs/migration.md)`,
			},
		},
		"Proposals": {
			reason: "Cozystack's proposals shipped (docs/migration.md, step 10): the release upgraded to a chart without the CRD, the controller running without the TenantGateway reconciler, its HelmRelease resumed",
			edit: func(objs []unstructured.Unstructured) []unstructured.Unstructured {
				var out []unstructured.Unstructured
				for _, u := range resolve(objs) {
					switch u.GetKind() {
					case "TenantGateway", "HTTPRoute", "Namespace":
						continue
					case "Deployment":
						_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas")
						_ = unstructured.SetNestedField(u.Object, int64(1), "status", "replicas")
						_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "manager", "image": "cozystack-controller",
							"args": []any{"--leader-elect", "--disable-controllers=workload,tenantgateway"}}}, "spec", "template", "spec", "containers")
					case "HelmRelease":
						_ = unstructured.SetNestedField(u.Object, false, "spec", "suspend")
					}
					out = append(out, u)
				}
				return out
			},
			upgraded: true,
			want: []string{
				`OK identity: no TenantGateway is in a tenant-* namespace: tenantgateway-writer-policy judges none of the takeover's writes`,
				`OK CRD ownership: CRD tenantgateways.gateway.cozystack.io belongs to Helm release cozy-system/cozystack-controller and carries helm.sh/resource-policy=keep`,
				`OK CRD ownership: Helm release cozy-system/cozystack-controller (revision 8) no longer renders CRD tenantgateways.gateway.cozystack.io`,
				`OK controller: Deployment cozy-system/cozystack-controller runs without the TenantGateway reconciler (--disable-controllers=tenantgateway)`,
				`OK controller: HelmRelease cozy-system/cozystack-controller is not suspended, and its release no longer renders the CRD and runs without the TenantGateway reconciler`,
			},
		},
		"Resolved": {
			reason:   "each blocker resolved as docs/migration.md says: nothing stops the takeover",
			edit:     resolve,
			upgraded: true,
			want: []string{
				`WARNING hostname winners: TenantGateway tenant-root/cozystack, app.alice.example.org: HTTPRoute/tenant-root/alice-copy, admitted by the controller's listener (a lost conflict is only reported), is not served by the function (Conflict: app.alice.example.org is claimed by HTTPRoute/tenant-alice/app, which wins it (the most specific delegation first, then cozy-* namespaces, then the smallest namespace/name); the Gateway admits only namespace tenant-alice for it)`,
				`OK hostname winners: TenantGateway tenant-root/cozystack: every hostname keeps the route that serves it (3 claimed)`,
				`OK hostname winners: TenantGateway tenant-x/cozystack: every hostname keeps the route that serves it (1 claimed)`,
				`OK TenantGateway specs: TenantGateway tenant-root/cozystack is accepted by the function`,
				`OK TenantGateway specs: TenantGateway tenant-x/cozystack is accepted by the function`,
				`OK identity: the takeover runs as oidc:alice (groups oidc:cozystack-cluster-admin, system:authenticated), a trusted caller of tenant-gateway-trusted-callers`,
				`OK CRD ownership: CRD tenantgateways.gateway.cozystack.io belongs to Helm release cozy-system/cozystack-controller and carries helm.sh/resource-policy=keep`,
				`OK CRD ownership: Helm release cozy-system/cozystack-controller (revision 8) no longer renders CRD tenantgateways.gateway.cozystack.io`,
				`WARNING controller: HelmRelease cozy-system/cozystack-controller is suspended: this component gets no upgrade (and no fix) until it is resumed, which must wait for a chart without the CRD and with the TenantGateway reconciler off`,
				`OK controller: Deployment cozy-system/cozystack-controller is scaled to 0 (and with it the controller's other reconcilers)`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := defaultOptions()
			o.Only = tc.only
			r := preflight(fixture(t, tc.edit, tc.upgraded), o)
			var got []string
			for _, f := range r.sorted() {
				got = append(got, string(f.Severity)+" "+f.Topic+": "+f.Text)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nreport: -want, +got:\n%s", tc.reason, diff)
			}
			var out bytes.Buffer
			if err := r.print(&out); err != nil {
				t.Fatal(err)
			}
			blocked := strings.Contains(out.String(), "blockers: resolve them before the takeover")
			if blocked != (r.blockers() > 0) || blocked != strings.Contains(strings.Join(tc.want, "\n"), "BLOCKER") {
				t.Errorf("verdict does not follow the blockers:\n%s", out.String())
			}
		})
	}
}

// resolve applies what docs/migration.md asks for before a takeover: the
// platform's namespaces attached by one owner, the tenant-x route moved
// to its Gateway, grafana to a hostname of its own, the refused tenant fixed, the administrator's
// group trusted, the CRD kept and dropped from the chart, the controller
// stopped and its HelmRelease suspended.
func resolve(objs []unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, u := range objs {
		switch u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName() {
		case "TenantGateway/tenant-root/cozystack":
			_ = unstructured.SetNestedStringSlice(u.Object, []string{"cozy-monitoring"}, "spec", "attachedNamespaces")
		case "TenantGateway/tenant-y/cozystack", "Namespace//tenant-y":
			continue
		case "HTTPRoute/cozy-dashboard/dashboard":
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "cozystack", "namespace": "tenant-x"}}, "spec", "parentRefs")
			_ = unstructured.SetNestedStringSlice(u.Object, []string{"dashboard.x.example.org"}, "spec", "hostnames")
		case "HTTPRoute/cozy-monitoring/grafana":
			_ = unstructured.SetNestedStringSlice(u.Object, []string{"grafana.example.org"}, "spec", "hostnames")
		case "EnvironmentConfig//tenant-gateway-trusted-callers":
			_ = unstructured.SetNestedStringSlice(u.Object, []string{"system:masters", "oidc:cozystack-cluster-admin"}, "data", "groups")
		case "CustomResourceDefinition//tenantgateways.gateway.cozystack.io":
			a := u.GetAnnotations()
			a[annotationPolicy] = policyKeep
			u.SetAnnotations(a)
		case "Secret/cozy-system/sh.helm.release.v1.cozystack-controller.v7":
			continue
		case "Deployment/cozy-system/cozystack-controller":
			_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "replicas")
			_ = unstructured.SetNestedField(u.Object, int64(0), "status", "replicas")
		case "HelmRelease/cozy-system/cozystack-controller":
			_ = unstructured.SetNestedField(u.Object, true, "spec", "suspend")
		}
		out = append(out, u)
	}
	// A loser of the controller's conflict that its listener still
	// admitted: the function does not serve it (a warning).
	loser := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "alice-copy", "namespace": "tenant-root"},
		"spec":     map[string]any{"parentRefs": []any{map[string]any{"name": "cozystack"}}, "hostnames": []any{"app.alice.example.org"}},
	}}
	return append(out, loser)
}
