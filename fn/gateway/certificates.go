package gateway

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// hostCertificate is the http01 Certificate of one hostname's listener. Its
// Secret has the Certificate's name, which the listener refers to.
func hostCertificate(in *Input, listener, hostname string) *cmv1.Certificate {
	name := listenerCertificateName(in.Name, listener)
	labels := commonLabels(in)
	labels[kube.LabelPerListenerCert] = "true"
	return certificate(in, name, labels, []string{hostname})
}

// wildcardCertificate is the dns01 Certificate of the apex, its wildcard and
// every child apex with a listener.
func wildcardCertificate(in *Input, dnsNames []string) *cmv1.Certificate {
	return certificate(in, WildcardCertificateName(in.Name), commonLabels(in), dnsNames)
}

func certificate(in *Input, name string, labels map[string]string, dnsNames []string) *cmv1.Certificate {
	return &cmv1.Certificate{
		TypeMeta: metav1.TypeMeta{APIVersion: cmv1.SchemeGroupVersion.String(), Kind: cmv1.CertificateKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: in.Namespace,
			Labels:    labels,
		},
		Spec: cmv1.CertificateSpec{
			SecretName: name,
			IssuerRef:  cmmeta.IssuerReference{Kind: cmv1.IssuerKind, Name: IssuerName(in.Name)},
			DNSNames:   dnsNames,
		},
	}
}
