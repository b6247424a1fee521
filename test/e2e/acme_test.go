//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// acmeCABundle is a self-signed ed25519 CA certificate, the CA of a
// platform's own ACME directory (the one examples/acme-server carries).
var acmeCABundle = readFile("test", "testdata", "acme-ca.pem")

// acmeTenantGateway is a TenantGateway in ns whose spec holds issuerName and
// acme as given (YAML fragments; empty leaves the field out).
func acmeTenantGateway(ns, issuerName, acme string) string {
	doc := fmt.Sprintf(`
apiVersion: gateway.cozystack.io/v1alpha1
kind: TenantGateway
metadata:
  name: cozystack
  namespace: %s
spec:
  apex: acmesrv.example
`, ns)
	if issuerName != "" {
		doc += "  issuerName: " + issuerName + "\n"
	}
	if acme != "" {
		doc += "  acme:\n" + acme
	}
	return doc
}

// TestACMEServer: a TenantGateway naming an ACME server of its own
// (issuerName with spec.acme) is admitted by the XRD and becomes an Issuer
// the cert-manager CRD accepts, with the directory, the CA bundle, the
// External Account Binding and the contact; the XRD's CEL rules and
// patterns refuse, at admission, spec.acme beside a built-in name, a name of
// its own without spec.acme, half a binding and a plain-http directory (see
// ACME servers in docs/design.md).
func TestACMEServer(t *testing.T) {
	t.Parallel()
	tenantNamespaces(t, "tenant-acmesrv", "acmesrv.example", nil)
	indent := func(s, by string) string {
		return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
	}
	server := "    server: https://acme.corp.example/directory\n"
	apply(t, acmeTenantGateway("tenant-acmesrv", "corp-ca", server+
		"    caBundle: |\n"+indent(acmeCABundle, "      ")+
		"    externalAccountBinding:\n      keyID: kid-1\n      keySecretRef: {name: corp-ca-eab, key: hmac}\n"+
		"    email: ops@example.org\n"))
	eventually(t, oneTTL+settle, "Issuer cozystack-gateway on the TenantGateway's own ACME server", func() (bool, string) {
		iss, found := get(t, gvkIssuer, "tenant-acmesrv", "cozystack-gateway")
		if !found {
			return false, "no Issuer; TenantGateway: " + show(tgw(t, "tenant-acmesrv", "cozystack"))
		}
		want := []string{"https://acme.corp.example/directory", base64.StdEncoding.EncodeToString([]byte(acmeCABundle)), "ops@example.org", "kid-1", "corp-ca-eab/hmac"}
		got := []string{
			str(iss, "spec", "acme", "server"), str(iss, "spec", "acme", "caBundle"), str(iss, "spec", "acme", "email"),
			str(iss, "spec", "acme", "externalAccountBinding", "keyID"),
			str(iss, "spec", "acme", "externalAccountBinding", "keySecretRef", "name") + "/" + str(iss, "spec", "acme", "externalAccountBinding", "keySecretRef", "key"),
		}
		return fmt.Sprint(got) == fmt.Sprint(want), show(iss)
	})

	const acmeRule = "spec.acme defines the ACME server when spec.issuerName is a name of its own, and only then"
	refused := map[string]struct{ doc, want string }{
		"ServerBesideBuiltin": {doc: acmeTenantGateway("tenant-acmesrv", "letsencrypt-stage", server), want: acmeRule},
		"ServerBesideDefault": {doc: acmeTenantGateway("tenant-acmesrv", "", server), want: acmeRule},
		"NameWithoutServer":   {doc: acmeTenantGateway("tenant-acmesrv", "corp-ca", ""), want: acmeRule},
		"HalfABinding": {
			doc:  acmeTenantGateway("tenant-acmesrv", "corp-ca", server+"    externalAccountBinding: {keyID: kid-1}\n"),
			want: "an External Account Binding needs both keyID and keySecretRef",
		},
		"PlainHTTP": {
			doc:  acmeTenantGateway("tenant-acmesrv", "corp-ca", "    server: http://acme.corp.example/directory\n"),
			want: `spec.acme.server: Invalid value: "http://acme.corp.example/directory": spec.acme.server in body should match '^https://'`,
		},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			err := applyDocs(t.Context(), k8s, tc.doc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("applying the TenantGateway: want a refusal holding %q, got %v", tc.want, err)
			}
		})
	}
}
