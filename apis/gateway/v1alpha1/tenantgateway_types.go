package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CertMode selects how the Gateway's TLS listeners get their certificates.
// +kubebuilder:validation:Enum=http01;dns01;existingSecret;edge
type CertMode string

// Certificate modes.
const (
	// CertModeHTTP01 issues one ACME certificate per hostname through the
	// HTTP-01 solver on the Gateway's own http listener.
	CertModeHTTP01 CertMode = "http01"
	// CertModeDNS01 issues one wildcard ACME certificate for the apex and every
	// inheriting child apex through a DNS-01 provider.
	CertModeDNS01 CertMode = "dns01"
	// CertModeExistingSecret serves an operator-supplied wildcard Secret.
	CertModeExistingSecret CertMode = "existingSecret"
	// CertModeEdge serves plain HTTP; TLS is terminated in front of the Gateway.
	CertModeEdge CertMode = "edge"
)

// CertModes lists every CertMode in the order the spec documents them.
var CertModes = []CertMode{CertModeHTTP01, CertModeDNS01, CertModeExistingSecret, CertModeEdge}

// IssuerName names the ACME server the per-tenant Issuer talks to: one of
// the built-in IssuerNames, or the name of the server spec.acme defines.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
type IssuerName string

// The built-in ACME issuers: Let's Encrypt's directories.
const (
	IssuerLetsEncryptProd  IssuerName = "letsencrypt-prod"
	IssuerLetsEncryptStage IssuerName = "letsencrypt-stage"
)

// IssuerNames lists the built-in IssuerNames. Any other name is an ACME
// server that spec.acme (or, for a Tenant, the platform settings) defines.
var IssuerNames = []IssuerName{IssuerLetsEncryptProd, IssuerLetsEncryptStage}

// MaxCABundle bounds ACMEServer.CABundle: the bundle is copied into the
// TenantGateway and its Issuer, both stored in etcd.
const MaxCABundle = 65536

// ACMEServer is an ACME directory other than the built-in ones: a CA of the
// platform's own, or a commercial one that binds accounts to an existing
// customer account.
type ACMEServer struct {
	// Server is the https URL of the ACME directory.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://`
	Server string `json:"server"`
	// CABundle is the PEM text (not base64) of the CA certificates that
	// verify the directory's TLS certificate; unset, cert-manager uses the
	// system roots.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	CABundle string `json:"caBundle,omitempty"`
	// ExternalAccountBinding binds the ACME account to an account at the
	// CA, as ZeroSSL, Google Trust Services and most enterprise ACME CAs
	// require.
	// +optional
	ExternalAccountBinding *ExternalAccountBinding `json:"externalAccountBinding,omitempty"`
	// Email is the contact address of the ACME account.
	// +kubebuilder:validation:MaxLength=254
	// +optional
	Email string `json:"email,omitempty"`
}

// ExternalAccountBinding is the CA's key ID and the Secret key holding its
// MAC key (unpadded base64url, as cert-manager reads it).
// +kubebuilder:validation:XValidation:rule="has(self.keyID) && has(self.keySecretRef)",message="an External Account Binding needs both keyID and keySecretRef"
type ExternalAccountBinding struct {
	// KeyID is the key ID the CA gave for the account.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	KeyID string `json:"keyID,omitempty"`
	// KeySecretRef names the Secret key, in the TenantGateway's namespace,
	// holding the MAC key.
	// +optional
	KeySecretRef *SecretKeySelector `json:"keySecretRef,omitempty"`
}

// DNS01ProviderName names a DNS-01 provider.
// +kubebuilder:validation:Enum=cloudflare;route53;digitalocean;rfc2136
type DNS01ProviderName string

// Supported DNS-01 providers.
const (
	DNS01Cloudflare   DNS01ProviderName = "cloudflare"
	DNS01Route53      DNS01ProviderName = "route53"
	DNS01DigitalOcean DNS01ProviderName = "digitalocean"
	DNS01RFC2136      DNS01ProviderName = "rfc2136"
)

// DNS01ProviderNames lists every supported DNS01ProviderName.
var DNS01ProviderNames = []DNS01ProviderName{DNS01Cloudflare, DNS01Route53, DNS01DigitalOcean, DNS01RFC2136}

// DefaultGatewayClassName is the class a TenantGateway uses when none is set.
const DefaultGatewayClassName = "cilium"

// DefaultTSIGAlgorithm is the RFC2136 TSIG algorithm used when none is set.
const DefaultTSIGAlgorithm = "HMACSHA256"

// SecretKeySelector names one key of a Secret in the TenantGateway's namespace.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key within the Secret.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// CloudflareProvider configures the Cloudflare DNS-01 provider.
type CloudflareProvider struct {
	// APITokenSecretRef names the Secret key holding a Cloudflare API token.
	APITokenSecretRef SecretKeySelector `json:"apiTokenSecretRef"`
}

// Route53Provider configures the AWS Route53 DNS-01 provider.
type Route53Provider struct {
	// Region of the Route53 API.
	// +kubebuilder:validation:MinLength=1
	Region string `json:"region"`
	// AccessKeyID of the IAM user. Empty uses ambient credentials.
	// +optional
	AccessKeyID string `json:"accessKeyID,omitempty"`
	// SecretAccessKeySecretRef names the Secret key holding the secret access
	// key. Unset, or set with an empty name (what the Cozystack gateway chart
	// renders without a Secret), uses ambient credentials.
	// +optional
	SecretAccessKeySecretRef *OptionalSecretKeySelector `json:"secretAccessKeySecretRef,omitempty"`
}

// OptionalSecretKeySelector names one key of a Secret in the TenantGateway's
// namespace, or, with an empty name, no Secret at all.
type OptionalSecretKeySelector struct {
	// Name of the Secret; empty means none.
	// +optional
	Name string `json:"name,omitempty"`
	// Key within the Secret; required with a name.
	// +optional
	Key string `json:"key,omitempty"`
}

// DigitalOceanProvider configures the DigitalOcean DNS-01 provider.
type DigitalOceanProvider struct {
	// TokenSecretRef names the Secret key holding a DigitalOcean API token.
	TokenSecretRef SecretKeySelector `json:"tokenSecretRef"`
}

// RFC2136Provider configures the RFC2136 (dynamic DNS update) provider.
type RFC2136Provider struct {
	// Nameserver is the host:port of the authoritative DNS server.
	// +kubebuilder:validation:MinLength=1
	Nameserver string `json:"nameserver"`
	// TSIGKeyName is the name of the TSIG key.
	// +kubebuilder:validation:MinLength=1
	TSIGKeyName string `json:"tsigKeyName"`
	// TSIGAlgorithm is the TSIG algorithm.
	// +kubebuilder:default=HMACSHA256
	// +optional
	TSIGAlgorithm string `json:"tsigAlgorithm,omitempty"`
	// TSIGSecretSecretRef names the Secret key holding the TSIG secret.
	TSIGSecretSecretRef SecretKeySelector `json:"tsigSecretSecretRef"`
}

// DNS01 configures the DNS-01 solver. The block named by Provider is
// required when certMode is dns01 (enforced on TenantGatewaySpec, where the
// mode is known).
type DNS01 struct {
	// Provider selects the DNS-01 provider.
	// +kubebuilder:default=cloudflare
	// +optional
	Provider DNS01ProviderName `json:"provider,omitempty"`
	// Cloudflare configures the cloudflare provider.
	// +optional
	Cloudflare *CloudflareProvider `json:"cloudflare,omitempty"`
	// Route53 configures the route53 provider.
	// +optional
	Route53 *Route53Provider `json:"route53,omitempty"`
	// DigitalOcean configures the digitalocean provider.
	// +optional
	DigitalOcean *DigitalOceanProvider `json:"digitalocean,omitempty"`
	// RFC2136 configures the rfc2136 provider.
	// +optional
	RFC2136 *RFC2136Provider `json:"rfc2136,omitempty"`
}

// LocalSecretReference names a Secret in the TenantGateway's namespace.
type LocalSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// DNSLabel is an RFC 1123 DNS label, such as a namespace or service name.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
type DNSLabel string

// TenantGatewaySpec is the operator's intent for one tenant's Gateway.
// +kubebuilder:validation:XValidation:rule="self.certMode != 'dns01' || has(self.dns01)",message="spec.dns01 is required when spec.certMode is dns01"
// +kubebuilder:validation:XValidation:rule="self.certMode != 'dns01' || !has(self.dns01) || self.dns01.provider != 'cloudflare' || has(self.dns01.cloudflare)",message="spec.dns01.cloudflare is required when spec.certMode is dns01 and spec.dns01.provider is cloudflare"
// +kubebuilder:validation:XValidation:rule="self.certMode != 'dns01' || !has(self.dns01) || self.dns01.provider != 'route53' || has(self.dns01.route53)",message="spec.dns01.route53 is required when spec.certMode is dns01 and spec.dns01.provider is route53"
// +kubebuilder:validation:XValidation:rule="self.certMode != 'dns01' || !has(self.dns01) || self.dns01.provider != 'digitalocean' || has(self.dns01.digitalocean)",message="spec.dns01.digitalocean is required when spec.certMode is dns01 and spec.dns01.provider is digitalocean"
// +kubebuilder:validation:XValidation:rule="self.certMode != 'dns01' || !has(self.dns01) || self.dns01.provider != 'rfc2136' || has(self.dns01.rfc2136)",message="spec.dns01.rfc2136 is required when spec.certMode is dns01 and spec.dns01.provider is rfc2136"
// +kubebuilder:validation:XValidation:rule="self.certMode != 'existingSecret' || has(self.wildcardSecretRef)",message="spec.wildcardSecretRef.name is required when spec.certMode is existingSecret"
// +kubebuilder:validation:XValidation:rule="!(self.certMode in ['http01', 'dns01']) || (has(self.issuerName) && !(self.issuerName in ['letsencrypt-prod', 'letsencrypt-stage'])) == has(self.acme)",message="spec.acme defines the ACME server when spec.issuerName is a name of its own, and only then: it is required for any spec.issuerName other than letsencrypt-prod and letsencrypt-stage, and forbidden with those"
type TenantGatewaySpec struct {
	// Apex is the tenant's apex domain: a lowercase DNS name without wildcard.
	// Every hostname the Gateway serves is the apex or one of its subdomains.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Apex string `json:"apex"`

	// CertMode selects how TLS listeners get their certificates.
	// +kubebuilder:default=http01
	// +optional
	CertMode CertMode `json:"certMode,omitempty"`

	// IssuerName selects the ACME server: letsencrypt-prod,
	// letsencrypt-stage, or a name of its own for the server spec.acme
	// defines. Read only in http01 and dns01.
	// +kubebuilder:default=letsencrypt-prod
	// +optional
	IssuerName IssuerName `json:"issuerName,omitempty"`

	// ACME is the ACME server named by IssuerName, when that is not a
	// built-in issuer: required then, forbidden otherwise. A Tenant's
	// TenantGateway gets it from the platform settings.
	// +optional
	ACME *ACMEServer `json:"acme,omitempty"`

	// DNS01 configures the DNS-01 provider. Required when certMode is dns01.
	// +optional
	DNS01 *DNS01 `json:"dns01,omitempty"`

	// WildcardSecretRef names the operator-supplied wildcard TLS Secret in
	// this namespace. Required when certMode is existingSecret.
	// +optional
	WildcardSecretRef *LocalSecretReference `json:"wildcardSecretRef,omitempty"`

	// AttachedNamespaces are namespaces, besides this one, whose routes may
	// attach to the Gateway. Each gets the label
	// namespace.cozystack.io/gateway=<this namespace>.
	// A repeated entry is accepted (the Cozystack gateway chart renders the
	// platform's list as it is), used once and reported in a Warning event.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +optional
	AttachedNamespaces []DNSLabel `json:"attachedNamespaces,omitempty"`

	// TLSPassthroughServices get one TLS passthrough listener each, for the
	// hostname <service>.<apex>. Ignored in edge mode.
	// A repeated entry is accepted, used once and reported in a Warning
	// event, as for attachedNamespaces.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	TLSPassthroughServices []DNSLabel `json:"tlsPassthroughServices,omitempty"`

	// GatewayClassName is the GatewayClass of the Gateway.
	// +kubebuilder:default=cilium
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	GatewayClassName string `json:"gatewayClassName,omitempty"`

	// ACMEOrdersPerBranch is deprecated and ignored (the quota is the
	// platform setting gateway.certificateOrders); kept so that specs
	// that set it still decode.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	ACMEOrdersPerBranch *int32 `json:"acmeOrdersPerBranch,omitempty"`

	// Infrastructure is copied into the Gateway's spec.infrastructure: labels
	// and annotations the implementation puts on what it creates for the
	// Gateway (its Service), such as Cilium's LB-IPAM annotation
	// lbipam.cilium.io/ips or a label an IP pool selects. A Tenant's
	// TenantGateway gets it from the platform settings
	// (gateway.infrastructure).
	// +optional
	Infrastructure *GatewayInfrastructure `json:"infrastructure,omitempty"`

	// Addresses are copied into the Gateway's spec.addresses: the addresses
	// the Gateway asks its implementation for. A Tenant's TenantGateway gets
	// them from the platform settings (gateway.infrastructure).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Addresses []GatewayAddress `json:"addresses,omitempty"`
}

// MaxInfrastructureEntries is how many labels, and how many annotations,
// Gateway API lets spec.infrastructure hold.
const MaxInfrastructureEntries = 8

// GatewayInfrastructure is what the Gateway's spec.infrastructure carries.
type GatewayInfrastructure struct {
	// Labels for what the implementation creates for the Gateway.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations for what the implementation creates for the Gateway.
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AddressType is the type of a Gateway address.
// +kubebuilder:validation:Enum=IPAddress;Hostname;NamedAddress
type AddressType string

// Address types (Gateway API's core and extended ones).
const (
	AddressIPAddress    AddressType = "IPAddress"
	AddressHostname     AddressType = "Hostname"
	AddressNamedAddress AddressType = "NamedAddress"
)

// AddressTypes are the allowed address types.
var AddressTypes = []AddressType{AddressIPAddress, AddressHostname, AddressNamedAddress}

// GatewayAddress is one address the Gateway asks for.
type GatewayAddress struct {
	// Type of the address: IPAddress (the default), Hostname or
	// NamedAddress (an implementation's named pool or address).
	// +optional
	Type AddressType `json:"type,omitempty"`
	// Value of the address: an IP address, a DNS name, or the name the
	// implementation knows.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Value string `json:"value"`
}

// ListenerStatus reports one Gateway listener, in Gateway order.
type ListenerStatus struct {
	// Name of the listener.
	Name string `json:"name"`
	// Hostname of the listener; empty for a listener that matches any host.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Port of the listener.
	Port int32 `json:"port"`
	// Ready is true when the listener is Accepted and Programmed, its
	// references resolved, and its Certificate, if composed, Ready.
	Ready bool `json:"ready"`
	// Reason is Ready, Pending, NotAccepted, NotProgrammed,
	// RefsNotResolved or CertificateNotReady.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is cert-manager's reason and message for CertificateNotReady,
	// at most 256 bytes.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Message string `json:"message,omitempty"`
	// CertificateName is the Secret the listener's TLS refers to.
	// +optional
	CertificateName string `json:"certificateName,omitempty"`
}

// HostnameState is the judgement of one hostname a route asked for.
// +kubebuilder:validation:Enum=Listening;Conflict;OutsideApex;NotDelegated;Invalid;NoMatchingParent;OverListenerLimit;OverCertificateLimit;Passthrough;Covered;Waiting
type HostnameState string

// Hostname states.
const (
	// HostnameListening has a listener of its own.
	HostnameListening HostnameState = "Listening"
	// HostnameConflict lost to a route of another namespace.
	HostnameConflict HostnameState = "Conflict"
	// HostnameOutsideApex is neither the apex nor under it or under an
	// inheriting child apex.
	HostnameOutsideApex HostnameState = "OutsideApex"
	// HostnameNotDelegated is outside what the claiming namespace was
	// delegated: its namespace.cozystack.io/host label, or the apex for the
	// TenantGateway's own namespace and its attachedNamespaces.
	HostnameNotDelegated HostnameState = "NotDelegated"
	// HostnameInvalid can never be served (pattern, wildcard under http01,
	// a name over its limit).
	HostnameInvalid HostnameState = "Invalid"
	// HostnameNoMatchingParent is claimed only by routes whose parentRefs
	// select no listener that takes the hostname: a sectionName or port
	// naming another listener, or a route kind no listener for it serves.
	HostnameNoMatchingParent HostnameState = "NoMatchingParent"
	// HostnameOverListenerLimit was left out by the 64-listener budget.
	HostnameOverListenerLimit HostnameState = "OverListenerLimit"
	// HostnameOverCertificateLimit is under a child apex the dns01
	// certificate's 100-name limit left out.
	HostnameOverCertificateLimit HostnameState = "OverCertificateLimit"
	// HostnamePassthrough is served by a TLS passthrough listener.
	HostnamePassthrough HostnameState = "Passthrough"
	// HostnameWaiting needs a new certificate order that its branch of the
	// delegation tree may not cause yet: the ACME order budget.
	HostnameWaiting HostnameState = "Waiting"
	// HostnameCovered is served by a wildcard or pinned listener.
	HostnameCovered HostnameState = "Covered"
)

// HostnameStatus reports one hostname claimed by one route.
type HostnameStatus struct {
	// Hostname the route asked for.
	Hostname string `json:"hostname"`
	// Route is <kind>/<namespace>/<name>.
	Route string `json:"route"`
	// State is the judgement of the claim.
	State HostnameState `json:"state"`
	// Message explains a state other than Listening or Covered.
	// +optional
	Message string `json:"message,omitempty"`
}

// ConflictStatus reports a hostname claimed from several namespaces.
type ConflictStatus struct {
	// Hostname in dispute.
	Hostname string `json:"hostname"`
	// Winner is the route (<kind>/<namespace>/<name>) that keeps it.
	Winner string `json:"winner"`
	// Losers are the routes refused for it, at most MaxConflictLosers.
	Losers []string `json:"losers"`
	// MoreLosers counts the losers left out of Losers.
	// +optional
	MoreLosers int `json:"moreLosers,omitempty"`
}

// MaxConflictLosers bounds ConflictStatus.Losers.
const MaxConflictLosers = 10

// ChildApexState is the judgement of an inheriting child apex.
// +kubebuilder:validation:Enum=Listening;Idle;Waiting;OutsideApex;OverListenerLimit;OverCertificateLimit;Invalid
type ChildApexState string

// Child apex states.
const (
	// ChildApexListening has a listener (and, in dns01, certificate names).
	ChildApexListening ChildApexState = "Listening"
	// ChildApexIdle has no route that claims a hostname in its zone, so it
	// holds no new listener and no new certificate name (one it holds
	// keeps its place until a route needs it).
	ChildApexIdle ChildApexState = "Idle"
	// ChildApexWaiting would change the dns01 certificate's names, an
	// order its branch of the delegation tree may not cause yet.
	ChildApexWaiting ChildApexState = "Waiting"
	// ChildApexOutsideApex is not under the TenantGateway's apex.
	ChildApexOutsideApex ChildApexState = "OutsideApex"
	// ChildApexOverListenerLimit was left out by the 64-listener budget.
	ChildApexOverListenerLimit ChildApexState = "OverListenerLimit"
	// ChildApexOverCertificateLimit was left out of the dns01 certificate
	// by the ACME CA's limit of 100 names per certificate.
	ChildApexOverCertificateLimit ChildApexState = "OverCertificateLimit"
	// ChildApexInvalid cannot be given a listener name of its own.
	ChildApexInvalid ChildApexState = "Invalid"
)

// ChildApexStatus reports one inheriting child apex.
type ChildApexStatus struct {
	// Apex of the child tenant.
	Apex string `json:"apex"`
	// Namespace of the child tenant.
	Namespace string `json:"namespace"`
	// State of the child apex.
	State ChildApexState `json:"state"`
	// Message explains a state other than Listening or OutsideApex.
	// +optional
	Message string `json:"message,omitempty"`
}

// HostnamelessRouteStatus reports a route that attaches without hostnames:
// it claims nothing, and is served on every listener that admits its
// namespace.
type HostnamelessRouteStatus struct {
	// Route is <kind>/<namespace>/<name>.
	Route string `json:"route"`
	// Listeners are the listeners whose allowedRoutes admit the route's
	// namespace, in Gateway order.
	// +optional
	Listeners []string `json:"listeners,omitempty"`
}

// StatusDigests remember what the last Warning events were about, so that a
// warning is raised when something changes even when the status lists are
// cut short.
type StatusDigests struct {
	// Conflicts is a digest of every contested hostname with its winner and
	// losers.
	// +optional
	Conflicts string `json:"conflicts,omitempty"`
	// LeftOut is a digest of every hostname and child apex a limit left out.
	// +optional
	LeftOut string `json:"leftOut,omitempty"`
	// Refused is a digest of the objects the ownership guard refused.
	// +optional
	Refused string `json:"refused,omitempty"`
	// Gateway is a digest of the GatewayReady cause about the class or the
	// Gateway's programming (GatewayClassNotFound, GatewayClassUnsupported,
	// GatewayNotProgrammed with the controller's reason).
	// +optional
	Gateway string `json:"gateway,omitempty"`
	// Certificates is a digest of the listeners whose Certificate is not
	// Ready, with cert-manager's reason.
	// +optional
	Certificates string `json:"certificates,omitempty"`
	// NoMatchingParent is a digest of the claims that match no listener.
	// +optional
	NoMatchingParent string `json:"noMatchingParent,omitempty"`
	// NotServed is a digest of the hostnames OutsideApex or Invalid.
	// +optional
	NotServed string `json:"notServed,omitempty"`
	// ChildApexesOutside is a digest of the child apexes outside the apex.
	// +optional
	ChildApexesOutside string `json:"childApexesOutside,omitempty"`
	// Repeated is a digest of the repeated list entries the spec holds
	// (used once each).
	// +optional
	Repeated string `json:"repeated,omitempty"`
}

// TenantGatewayStatus is what the function observed and decided. Crossplane
// adds its own conditions (Ready, Synced) and the custom ones the function
// returns (GatewayReady, ListenersReady, RoutesAccepted) next to these fields.
type TenantGatewayStatus struct {
	// ObservedGeneration is the metadata.generation of the TenantGateway
	// the function last computed this status and its GatewayReady,
	// ListenersReady and RoutesAccepted conditions from. Crossplane's
	// function protocol carries no observedGeneration for the conditions a
	// function sets: compare this with metadata.generation to know whether
	// they reflect the current spec.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// CertMode is the certificate mode in force.
	// +optional
	CertMode CertMode `json:"certMode,omitempty"`
	// Listeners mirror the Gateway's listeners, in Gateway order.
	// +optional
	Listeners []ListenerStatus `json:"listeners,omitempty"`
	// Hostnames are every hostname a route asked for, with its state.
	// +optional
	Hostnames []HostnameStatus `json:"hostnames,omitempty"`
	// Conflicts are hostnames claimed from several namespaces, at most
	// MaxConflictStatus, in hostname order.
	// +optional
	Conflicts []ConflictStatus `json:"conflicts,omitempty"`
	// ConflictCount is the number of contested hostnames, Conflicts listed
	// or not.
	// +optional
	ConflictCount int `json:"conflictCount,omitempty"`
	// HostnamelessRoutes are the attached routes without hostnames, at most
	// MaxHostnamelessStatus.
	// +optional
	HostnamelessRoutes []HostnamelessRouteStatus `json:"hostnamelessRoutes,omitempty"`
	// ChildApexes are the apexes of inheriting child tenants: every one
	// that is Listening, and at most MaxChildApexStatus others.
	// +optional
	ChildApexes []ChildApexStatus `json:"childApexes,omitempty"`
	// ChildApexCount is the number of inheriting child apexes, listed or not.
	// +optional
	ChildApexCount int `json:"childApexCount,omitempty"`
	// Digests are the function's memory of what it last warned about.
	// +optional
	Digests *StatusDigests `json:"digests,omitempty"`
	// Orders is deprecated and no longer written (the order ledger is
	// kept per registered domain); kept so that a status that holds it
	// still decodes.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Orders []OrderStatus `json:"orders,omitempty"`
}

// OrderStatus is one certificate order of the deprecated status.orders.
type OrderStatus struct {
	// Branch charged.
	Branch string `json:"branch"`
	// Certificate ordered.
	Certificate string `json:"certificate"`
	// At is when it was ordered.
	At metav1.Time `json:"at"`
}

// Bounds of the status lists: the XR is stored in etcd, whose objects are
// limited to about 1.5 MiB.
const (
	MaxConflictStatus     = 100
	MaxHostnamelessStatus = 100
	MaxChildApexStatus    = 100
)

// A TenantGateway gives one tenant its own Gateway API Gateway with
// automatic TLS. Crossplane appends its own SYNCED, READY, COMPOSITION and
// AGE printer columns to the four declared here; GATEWAY is the reason of
// the GatewayReady condition (Reconciled, or the first problem found).
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=tgw
// +kubebuilder:printcolumn:name="APEX",type="string",JSONPath=".spec.apex"
// +kubebuilder:printcolumn:name="MODE",type="string",JSONPath=".spec.certMode"
// +kubebuilder:printcolumn:name="CLASS",type="string",JSONPath=".spec.gatewayClassName"
// +kubebuilder:printcolumn:name="GATEWAY",type="string",JSONPath=".status.conditions[?(@.type=='GatewayReady')].reason"
type TenantGateway struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:Required
	Spec   TenantGatewaySpec   `json:"spec"`
	Status TenantGatewayStatus `json:"status,omitempty"`
}
