package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rename gives a composed resource of a TenantGateway another name, as an
// earlier build that named it otherwise would have, and points the XR's
// reference at it.
func (p *platform) rename(t *testing.T, apiVersion, kind, ns, from, to string) {
	t.Helper()
	u := p.get(t, apiVersion, kind, ns, from)
	gvr, _ := resourceOf(apiVersion, kind)
	if err := p.dyn.Resource(gvr).Namespace(ns).Delete(context.Background(), from, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	u.SetName(to)
	u.SetResourceVersion("")
	p.put(t, u)
	xr := p.get(t, "gateway.cozystack.io/v1alpha1", "TenantGateway", ns, "cozystack")
	refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "crossplane", "resourceRefs")
	for _, r := range refs {
		if m := r.(map[string]any); m["kind"] == kind && m["name"] == from {
			m["name"] = to
		}
	}
	if err := unstructured.SetNestedSlice(xr.Object, refs, "spec", "crossplane", "resourceRefs"); err != nil {
		t.Fatal(err)
	}
	p.put(t, xr)
}

// edit changes a live object.
func (p *platform) edit(t *testing.T, apiVersion, kind, ns, name string, fn func(u *unstructured.Unstructured)) {
	t.Helper()
	u := p.get(t, apiVersion, kind, ns, name)
	fn(u)
	gvr, namespaced := resourceOf(apiVersion, kind)
	if !namespaced {
		ns = ""
	}
	if _, err := p.dyn.Resource(gvr).Namespace(ns).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestPlan(t *testing.T) {
	const (
		gw      = "gateway.networking.k8s.io/v1"
		www     = "https-www-3dafe8f2"
		wwwCert = "cozystack-www-3dafe8f2-tls"
	)
	type want struct {
		// Changes of each composite resource that changes.
		Changes map[string][]change
		Served  bool
	}
	cases := map[string]struct {
		reason   string
		live     func(t *testing.T, p *platform)
		settings string
		want     want
	}{
		"SteadyState": {
			reason: "On a platform this build composed, nothing changes, and the plan exits 0",
			want:   want{Changes: map[string][]change{}},
		},
		"ListenerRenamedCertificateReissued": {
			reason: "A build that named a hostname's listener and Certificate otherwise: the listener is renamed, its route moves to the new name, and the Certificate is ordered anew under its new name",
			live: func(t *testing.T, p *platform) {
				p.edit(t, gw, "Gateway", "tenant-t0", "cozystack", func(u *unstructured.Unstructured) {
					ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
					for _, l := range ls {
						if m := l.(map[string]any); m["name"] == www {
							m["name"] = "https-www-old"
						}
					}
					_ = unstructured.SetNestedSlice(u.Object, ls, "spec", "listeners")
				})
				p.rename(t, "cert-manager.io/v1", "Certificate", "tenant-t0", wwwCert, "cozystack-www-old-tls")
			},
			want: want{Served: true, Changes: map[string][]change{"TenantGateway tenant-t0/cozystack": {
				{Category: catListener, Action: actRenamed, Name: "HTTPS www.t0.example.org port 443", From: "https-www-old", To: www, Served: true},
				{Category: catRoute, Action: actChanged, Name: "HTTPRoute/tenant-t0/web www.t0.example.org", From: "https-www-old", To: www, Served: true},
				{Category: catCertificate, Action: actReissued, Name: wwwCert, From: "cozystack-www-old-tls www.t0.example.org", To: wwwCert + " www.t0.example.org (a new ACME order)", Served: true},
			}}},
		},
		"CertificateDNSNamesChange": {
			reason: "A Certificate whose DNS names change is ordered anew",
			live: func(t *testing.T, p *platform) {
				p.edit(t, "cert-manager.io/v1", "Certificate", "tenant-t0", wwwCert, func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedStringSlice(u.Object, []string{"www.t0.example.org", "old.t0.example.org"}, "spec", "dnsNames")
				})
			},
			want: want{Served: true, Changes: map[string][]change{"TenantGateway tenant-t0/cozystack": {
				{Category: catCertificate, Action: actReissued, Name: wwwCert, From: wwwCert + " old.t0.example.org, www.t0.example.org", To: wwwCert + " www.t0.example.org (a new ACME order)", Served: true},
			}}},
		},
		"NamespaceLabelChange": {
			reason: "A tenant namespace whose gateway label names another owner: its Tenant puts its own back, and until then its TenantGateway no longer admits it (every listener and Certificate goes) while the other reports the foreign apex; each is planned against what is live now",
			live: func(t *testing.T, p *platform) {
				p.edit(t, "v1", "Namespace", "", "tenant-t1", func(u *unstructured.Unstructured) {
					l := u.GetLabels()
					l["namespace.cozystack.io/gateway"] = "tenant-t0"
					u.SetLabels(l)
				})
			},
			want: want{Served: true, Changes: map[string][]change{
				"XTenant tenant-root-t1 (Tenant tenant-root/t1)": {
					{Category: catNamespace, Action: actChanged, Name: "Namespace tenant-t1 label namespace.cozystack.io/gateway", From: "tenant-t0", To: "tenant-t1", Served: true},
				},
				"TenantGateway tenant-t0/cozystack": {
					{Category: catCondition, Action: actChanged, Name: "RoutesAccepted", From: "True Accepted", To: "False ChildApexOutsideApex"},
				},
				"TenantGateway tenant-t1/cozystack": {
					{Category: catListener, Action: actRemoved, Name: "https-api-39448fb9", From: "HTTPS api.t1.example.org port 443", Served: true},
					{Category: catListener, Action: actRemoved, Name: "https-www-74642052", From: "HTTPS www.t1.example.org port 443", Served: true},
					{Category: catRoute, Action: actLost, Name: "HTTPRoute/tenant-t1/api api.t1.example.org", From: "https-api-39448fb9", Served: true},
					{Category: catRoute, Action: actLost, Name: "HTTPRoute/tenant-t1/web www.t1.example.org", From: "https-www-74642052", Served: true},
					{Category: catCertificate, Action: actRemoved, Name: "cozystack-api-39448fb9-tls", From: "api.t1.example.org", Served: true},
					{Category: catCertificate, Action: actRemoved, Name: "cozystack-www-74642052-tls", From: "www.t1.example.org", Served: true},
					// The record closes the two orders: asking for the names again is a new order.
					{Category: catObject, Action: actChanged, Name: "Object tenant-t1/cozystack-order-ledger", To: "fields spec.forProvider.manifest.data.record", Served: true},
					{Category: catCondition, Action: actChanged, Name: "RoutesAccepted", From: "True Accepted", To: "False NamespaceNotAdmitted"},
				},
			}},
		},
		"ProposedSettings": {
			reason:   "Proposed platform settings with another Gateway class: every tenant's TenantGateway object changes",
			settings: strings.Replace(settings("example.org"), "className: cilium", "className: envoy", 1),
			want: want{Served: true, Changes: map[string][]change{
				"XTenant tenant-root-t0 (Tenant tenant-root/t0)": {{Category: catObject, Action: actChanged, Name: "Object tenant-t0-tenantgateway", To: "fields spec.forProvider.manifest.spec.gatewayClassName", Served: true}},
				"XTenant tenant-root-t1 (Tenant tenant-root/t1)": {{Category: catObject, Action: actChanged, Name: "Object tenant-t1-tenantgateway", To: "fields spec.forProvider.manifest.spec.gatewayClassName", Served: true}},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tenantPlatform(t, 2)
			if tc.live != nil {
				tc.live(t, p)
			}
			r := p.reader()
			if tc.settings != "" {
				if err := r.Override(docs(t, tc.settings)[0]); err != nil {
					t.Fatal(err)
				}
			}
			res, err := newPlanner(r, defaultOptions()).plan(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := want{Changes: map[string][]change{}, Served: res.Served}
			for _, x := range res.XRs {
				if x.Error != "" {
					t.Fatalf("%s: %s", x.id(), x.Error)
				}
				got.Changes[x.id()] = x.Changes
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			var out bytes.Buffer
			err = planAndPrint(context.Background(), p.reader(), defaultOptions(), nil, &out)
			if tc.settings == "" && errors.Is(err, errChanges) != tc.want.Served {
				t.Errorf("planAndPrint: %v, want errChanges: %t\n%s", err, tc.want.Served, out.String())
			}
		})
	}
}

// TestPlanOutput: the summary lists each composite resource's changes under
// it, bounded, and ends with the verdict; the JSON holds the same.
func TestPlanOutput(t *testing.T) {
	res := &result{Planned: map[string]int{kindTenantGateway: 2, kindXTenant: 2}, Served: true, XRs: []xrPlan{{
		Kind: kindTenantGateway, Namespace: "tenant-t0", Name: "cozystack", Served: true, Changes: []change{
			{Category: catListener, Action: actRenamed, Name: "HTTPS www.t0.example.org port 443", From: "https-www-old", To: "https-www-3dafe8f2", Served: true},
			{Category: catCertificate, Action: actReissued, Name: "cozystack-www-3dafe8f2-tls", From: "cozystack-www-old-tls www.t0.example.org", To: "cozystack-www-3dafe8f2-tls www.t0.example.org (a new ACME order)", Served: true},
			{Category: catCondition, Action: actChanged, Name: "GatewayReady", From: "True Reconciled", To: "False ListenersNotReady"},
		},
	}}}
	o := defaultOptions()
	o.MaxChanges = 2
	var out bytes.Buffer
	if err := res.print(&out, o); err != nil {
		t.Fatal(err)
	}
	want := `TenantGateway tenant-t0/cozystack: 3 changes, to what it serves
  listener    renamed            HTTPS www.t0.example.org port 443: https-www-old → https-www-3dafe8f2
  certificate reissued           cozystack-www-3dafe8f2-tls: cozystack-www-old-tls www.t0.example.org → cozystack-www-3dafe8f2-tls www.t0.example.org (a new ACME order)
  … and 1 more (--json lists them)
plan: 2 TenantGateways and 2 XTenants planned, 1 would change: what is served would change (exit 2)
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("summary: -want, +got:\n%s", diff)
	}
	out.Reset()
	o.JSON = true
	if err := res.print(&out, o); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"served": true`, `"action": "reissued"`, `"kind": "TenantGateway"`} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("JSON lacks %s:\n%s", s, out.String())
		}
	}
}

// TestPlanBadInput: what the plan cannot read is named, before anything
// is planned.
func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	notSettings := filepath.Join(dir, "configmap.yaml")
	if err := os.WriteFile(notSettings, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		o    options
		want string
	}{
		"MissingKubeconfig": {
			o:    options{Kubeconfig: filepath.Join(dir, "absent")},
			want: "cannot load the kubeconfig (" + filepath.Join(dir, "absent") + "): stat " + filepath.Join(dir, "absent") + ": no such file or directory",
		},
		"UnreadableSettings": {
			o:    options{Settings: filepath.Join(dir, "absent.yaml")},
			want: "cannot read the platform settings file: open " + filepath.Join(dir, "absent.yaml") + ": no such file or directory",
		},
		"SettingsNotAnEnvironmentConfig": {
			o:    options{Settings: notSettings},
			want: "the platform settings file " + notSettings + ` holds no EnvironmentConfig with a name (apiVersion "v1", kind "ConfigMap", name "x")`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), tc.o)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// TestPlanUnplannable: a composite resource whose Composition is gone is
// named with the reason, and the plan fails rather than pass it by.
func TestPlanUnplannable(t *testing.T) {
	p := newPlatform(t, docs(t, `apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: tenant-x
spec:
  apex: x.example.org
  crossplane:
    compositionRef:
      name: gone
`)...)
	var out bytes.Buffer
	err := planAndPrint(context.Background(), p.reader(), defaultOptions(), nil, &out)
	got := out.String() + "error: " + err.Error()
	want := `TenantGateway tenant-x/cozystack: cannot plan: it names no Composition or CompositionRevision that exists
plan: 1 TenantGateway and 0 XTenants planned, 0 would change: 1 composite resource could not be planned (exit 1)
error: cannot plan 1 composite resource (listed above)`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
