//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

var gvkConfigurationRev = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "ConfigurationRevision"}

// guardDenials is how many requests the API server's deletion-guard-policy
// has denied so far (apiserver_validating_admission_policy_check_total),
// read from the API server's metrics as an administrator.
func guardDenials(t *testing.T) float64 {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("cannot read the API server's metrics: %v", err)
	}
	var n float64
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "apiserver_validating_admission_policy_check_total{") ||
			!strings.Contains(l, `policy="deletion-guard-policy"`) || !strings.Contains(l, `enforcement_action="deny"`) {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("cannot read %q: %v", l, err)
		}
		n += v
	}
	return n
}

// TestConfigurationDeletion deletes the Configuration of a live platform,
// for real, so `make e2e` runs it last, on its own (run.sh, with
// E2E_DESTRUCTIVE=1), after every other test of the fresh-install pass.
// Unconfirmed, the administrator's deletion is refused. Confirmed on the
// Configuration alone, the Configuration, its revision and Compositions
// go, but the garbage collector's deletion of the XRDs is refused in turn
// (the policy's deny count rises), and the tenant namespace, its Gateway
// and the Tenant stay. Confirmed on the XRDs, their deletion is admitted
// and Crossplane deletes the tenant with its namespace: what Uninstall
// does on purpose.
func TestConfigurationDeletion(t *testing.T) {
	if os.Getenv("E2E_DESTRUCTIVE") == "" {
		t.Skip("deletes the Configuration: run last and alone with E2E_DESTRUCTIVE=1 (test/e2e/hack/run.sh does)")
	}
	const cfg = "cozystack-configuration-tenant-gateway"
	namespace(t, "tenant-root", nil)
	apply(t, `
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: root, namespace: tenant-root}
spec: {gateway: true}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: keep, namespace: tenant-root}
spec: {gateway: true}
`)
	eventually(t, oneTTL+settle, "the Tenant keep's Gateway tenant-keep/cozystack", func() (bool, string) {
		_, found := get(t, gvkGateway, "tenant-keep", "cozystack")
		return found, show(tgw(t, "tenant-keep", "cozystack"))
	})
	base := guardDenials(t)

	// Unconfirmed: refused.
	c, _ := get(t, gvkConfiguration, "", cfg)
	if err := k8s.Delete(t.Context(), c); !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "deletion-guard-policy") {
		t.Fatalf("deleting the Configuration unconfirmed: want refused by deletion-guard-policy, got %v", err)
	}
	// Confirmed on the Configuration only: it goes with its revision and
	// Compositions; the collector's deletion of each XRD is refused.
	// The Tenant API's Configuration first (it depends on the other).
	for _, name := range []string{cfg + "-tenant", cfg} {
		annotate(t, gvkConfiguration, name, name)
		c, _ = get(t, gvkConfiguration, "", name)
		if err := k8s.Delete(t.Context(), c); err != nil {
			t.Fatalf("deleting the confirmed Configuration %s: %v", name, err)
		}
	}
	eventually(t, 5*time.Minute, "the Configuration, its revisions and the Compositions deleted, and the guard refusing the garbage collector's deletion of both XRDs", func() (bool, string) {
		_, cfgLeft := get(t, gvkConfiguration, "", cfg)
		revs := len(list(t, gvkConfigurationRev, ""))
		_, tc := get(t, gvkComposition, "", "tenant")
		_, tgc := get(t, gvkComposition, "", "tenantgateway")
		denied := guardDenials(t) - base
		return !cfgLeft && revs == 0 && !tc && !tgc && denied >= 3,
			fmt.Sprintf("Configuration left %v, %d revisions, Compositions tenant %v tenantgateway %v, %v denials (1 the administrator's)", cfgLeft, revs, tc, tgc, denied)
	})
	// The collector retries with a back-off: wait until it has tried again
	// and been refused, so the check below follows a retry. Its back-off
	// doubles (at most 1000 s), so the next retry comes about as long
	// after the first as the first denials took.
	denied := guardDenials(t)
	eventually(t, 5*time.Minute, "the garbage collector retrying an XRD's deletion, refused again", func() (bool, string) {
		n := guardDenials(t)
		return n > denied, fmt.Sprintf("%v denials, %v before", n, denied)
	})
	for _, o := range []struct {
		gvk      schema.GroupVersionKind
		ns, name string
	}{
		{gvkXRD, "", "tenantgateways.gateway.cozystack.io"},
		{gvkXRD, "", "xtenants.apps.cozystack.io"},
		{gvkNamespace, "", "tenant-keep"},
		{gvkGateway, "tenant-keep", "cozystack"},
		{gvkTenant, "tenant-root", "keep"},
	} {
		u, found := get(t, o.gvk, o.ns, o.name)
		if !found || u.GetDeletionTimestamp() != nil {
			t.Errorf("%s %s/%s is gone or being deleted after the Configuration was deleted: %s", o.gvk.Kind, o.ns, o.name, show(u))
		}
	}
	if t.Failed() {
		return
	}

	// Confirmed on the XRDs: their deletion is admitted, and Crossplane
	// deletes every XR of them, the tenant with its namespace.
	for _, xrd := range []string{"xtenants.apps.cozystack.io", "tenantgateways.gateway.cozystack.io"} {
		annotate(t, gvkXRD, xrd, xrd)
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvkXRD)
		u.SetName(xrd)
		if err := k8s.Delete(t.Context(), u); err != nil && !kerrors.IsNotFound(err) {
			t.Fatalf("deleting the confirmed XRD %s: %v", xrd, err)
		}
	}
	eventually(t, 5*time.Minute, "the XRDs, the tenant namespace tenant-keep and its Gateway deleted", func() (bool, string) {
		_, x1 := get(t, gvkXRD, "", "xtenants.apps.cozystack.io")
		_, x2 := get(t, gvkXRD, "", "tenantgateways.gateway.cozystack.io")
		ns, nsLeft := get(t, gvkNamespace, "", "tenant-keep")
		return !x1 && !x2 && !nsLeft, fmt.Sprintf("XRD xtenants left %v, tenantgateways left %v; %s", x1, x2, show(ns))
	})
}
