#!/bin/bash
# Brings up a real issuer for the end-to-end tests as three more
# plain processes of the loopback control plane, after up.sh has started the
# API server and applied the cert-manager CRDs; down.sh stops them by PID.
# Called by up.sh with its environment (E2E_DIR, CERT_MANAGER, PEBBLE,
# kubectl on PATH, KUBECONFIG).
#
# - BIND 9 (Debian's named) on 127.0.0.1:8053, authoritative for the test
#   zone tls.example (E2E_TLS_ZONE: the migration pass's is
#   mig-dns.example), taking RFC 2136 updates signed with the TSIG key
#   e2e-tsig (hmac-sha256, made fresh each run; its secret in
#   run/tls/tsig.secret for the tests). No recursion: it is the only
#   nameserver Pebble and cert-manager's DNS-01 self-check ask. It also
#   serves the zone web.example of the http01 tests, every name of which
#   resolves to 127.0.80.80: the address of the Gateway's data plane, which
#   the tests play there (test/e2e/solver_test.go), as a platform's DNS
#   points its tenants' names at its Gateway.
# - Pebble, the ACME test server, at https://127.0.0.1:14000/dir with a
#   serving certificate of a CA made here (pki/pebble-ca.crt, which the
#   tests give the TenantGateway as spec.acme.caBundle); it resolves through
#   named, validates for real (PEBBLE_VA_NOSLEEP only drops its random
#   sleeps) and reuses no authorization, so every order is validated. Its
#   own issuing root, new each run, is served on 127.0.0.1:15000/roots/0.
#   It validates HTTP-01 on port 80, as a public ACME server does.
# - cert-manager's ACME controllers (test/e2e/tools/cert-manager), as the
#   admin, watching only the namespace tenant-tls (E2E_TLS_NAMESPACE: the
#   migration pass's is mig-dns): the other tests play cert-manager in their
#   own namespaces and must not meet the real one.
#   Each Certificate owns its Secret (--enable-certificate-owner-ref, as
#   docs/design.md asks of a platform), so a Secret goes with its
#   Certificate. A second process watches only tenant-web, the namespace of
#   the http01 tests (cert-manager watches one namespace or all); its
#   HTTP-01 self-check resolves through named, as Pebble does.
set -euo pipefail
R=${E2E_DIR:?}; : "${CERT_MANAGER:?}" "${PEBBLE:?}" "${KUBECONFIG:?}"
P=$R/pki; S=$R/run; L=$R/logs; D=$S/tls
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PREFIX=tls; . "$ROOT/hack/lib.sh"
for t in named tsig-keygen dig; do command -v $t >/dev/null || fail "$t is missing (apt-get install bind9 bind9-utils bind9-dnsutils)"; done
ports_free 8053 14000 15000 5001
mkdir -p "$D/bind"
ZONE=${E2E_TLS_ZONE:-tls.example} WEB=web.example

# --- BIND: the zone, its TSIG key and named's configuration ---
tsig-keygen -a hmac-sha256 e2e-tsig > "$D/bind/e2e-tsig.key"
sed -n 's/^[[:space:]]*secret "\(.*\)";/\1/p' "$D/bind/e2e-tsig.key" > "$D/tsig.secret"
[ -s "$D/tsig.secret" ] || fail "cannot read the TSIG secret tsig-keygen made"
cat > "$D/bind/$ZONE.zone" <<Z
\$TTL 60
@   IN SOA ns.$ZONE. hostmaster.$ZONE. 1 60 60 600 60
@   IN NS  ns.$ZONE.
ns  IN A   127.0.0.1
Z
cat > "$D/bind/$WEB.zone" <<Z
\$TTL 60
@   IN SOA ns.$ZONE. hostmaster.$ZONE. 1 60 60 600 60
@   IN NS  ns.$ZONE.
@   IN A   127.0.80.80
*   IN A   127.0.80.80
; a name that leads away from the Gateway: nothing answers there
astray IN A 127.0.80.81
Z
cat > "$D/bind/named.conf" <<C
options {
  directory "$D/bind";
  pid-file "$D/bind/named.pid";
  session-keyfile "$D/bind/session.key";
  listen-on port 8053 { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  allow-transfer { none; };
  dnssec-validation no;
};
controls { };
include "$D/bind/e2e-tsig.key";
zone "$ZONE" { type primary; file "$D/bind/$ZONE.zone"; allow-update { key "e2e-tsig"; }; };
zone "$WEB" { type primary; file "$D/bind/$WEB.zone"; };
C
named-checkconf "$D/bind/named.conf" || fail "named.conf is refused"
bg named named -g -n 1 -c "$D/bind/named.conf"
waitfor 30 sh -c "dig +short +time=1 +tries=1 -p 8053 @127.0.0.1 SOA $ZONE | grep -q ns.$ZONE" || fail "named does not answer for $ZONE (see named.log)"
waitfor 30 sh -c "dig +short +time=1 +tries=1 -p 8053 @127.0.0.1 A www.$WEB | grep -qx 127.0.80.80" || fail "named does not answer for $WEB (see named.log)"

# --- Pebble: its serving certificate and configuration ---
if [ ! -f "$P/pebble-ca.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/pebble-ca.key" -out "$P/pebble-ca.crt" -days 3650 -subj "/CN=e2e-pebble-ca" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$P/pebble.ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$P/pebble.key" -out "$P/pebble.csr" -subj "/CN=pebble" 2>/dev/null
  openssl x509 -req -in "$P/pebble.csr" -CA "$P/pebble-ca.crt" -CAkey "$P/pebble-ca.key" -CAcreateserial -out "$P/pebble.crt" -days 3650 -extfile "$P/pebble.ext" 2>/dev/null
fi
cat > "$D/pebble.json" <<J
{"pebble": {
  "listenAddress": "127.0.0.1:14000", "managementListenAddress": "127.0.0.1:15000",
  "certificate": "$P/pebble.crt", "privateKey": "$P/pebble.key",
  "httpPort": 80, "tlsPort": 5001, "ocspResponderURL": "", "externalAccountBindingRequired": false,
  "retryAfter": {"authz": 1, "order": 1},
  "profiles": {"default": {"description": "e2e", "validityPeriod": 7776000}}
}}
J
PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 PEBBLE_AUTHZREUSE=0 bg pebble "$PEBBLE" -config "$D/pebble.json" -dnsserver 127.0.0.1:8053
waitfor 30 curl -sf --cacert "$P/pebble-ca.crt" https://127.0.0.1:14000/dir || fail "Pebble does not serve its directory (see pebble.log)"
waitfor 30 curl -sf --cacert "$P/pebble-ca.crt" -o "$D/pebble-root.pem" https://127.0.0.1:15000/roots/0 || fail "Pebble does not serve its root (see pebble.log)"

# --- cert-manager's controllers ---
bg cert-manager "$CERT_MANAGER" --kubeconfig="$KUBECONFIG" --namespace="${E2E_TLS_NAMESPACE:-tenant-tls}" \
  --dns01-recursive-nameservers=127.0.0.1:8053 --dns01-check-retry-period=2s --enable-certificate-owner-ref -v=2
bg cert-manager-web "$CERT_MANAGER" --kubeconfig="$KUBECONFIG" --namespace=tenant-web \
  --acme-http01-solver-nameservers=127.0.0.1:8053 --enable-certificate-owner-ref -v=2
for n in cert-manager cert-manager-web; do
  waitfor 30 grep -q "controllers started" "$L/$n.log" || fail "cert-manager's controllers did not start (see $n.log)"
done
