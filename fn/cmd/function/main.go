// Command function serves function-tenant-gateway over gRPC.
package main

import (
	"fmt"
	"time"

	"github.com/alecthomas/kong"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/encoding"

	"github.com/crossplane/function-sdk-go"

	"github.com/cozystack/function-tenant-gateway/fn"
)

// CLI are the flags of the function binary.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string        `default:"tcp"                                                                                                                   help:"Network on which to listen for gRPC connections."`
	Address            string        `default:":9443"                                                                                                                 help:"Address at which to listen for gRPC connections."`
	TLSServerCertsDir  string        `env:"TLS_SERVER_CERTS_DIR"                                                                                                      help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure           bool          `help:"Run without mTLS credentials. Only for local development and crossplane render."`
	MaxRecvMessageSize int           `default:"64"                                                                                                                    help:"Maximum size of a received gRPC message, in MiB. Every route of the cluster may be in a request: about 1.4 KiB each, so 64 MiB admits some 45,000 routes where gRPC's default 4 MiB admits about 3,000."`
	TTL                time.Duration `default:"60s"                                                                                                                   help:"How long Crossplane may cache a response, and the longest it waits to run a TenantGateway again. Crossplane re-runs a TenantGateway when an object it required changes, so this bounds only what no event reports."`
	Clock              string        `help:"Run as if the time were this one (RFC 3339), for the ACME order budget: crossplane render uses it so that renders are reproducible. Empty: the system clock."`
	MetricsAddress     string        `default:":8080"                                                                                                                 help:"Address of the Prometheus metrics endpoint; empty disables it."`
}

// Run serves the function until it fails.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	// Route requirements stay bytes, read field by field (see Lazy
	// decoding in docs/design.md). Registered before Serve builds its
	// server, which looks codecs up by content subtype on every call.
	encoding.RegisterCodecV2(fn.NewCodec())
	log.Info("serving function-tenant-gateway", "address", c.Address, "insecure", c.Insecure, "ttl", c.TTL.String(), "max-recv-message-size-mib", c.MaxRecvMessageSize)
	opts := []fn.Option{fn.WithLogger(log), fn.WithTTL(c.TTL)}
	if c.Clock != "" {
		at, err := time.Parse(time.RFC3339, c.Clock)
		if err != nil {
			return fmt.Errorf("cannot parse --clock: %w", err)
		}
		opts = append(opts, fn.WithClock(func() time.Time { return at }))
	}
	if c.MetricsAddress != "" {
		// The registry function.Serve's metrics endpoint serves. A
		// TenantGateway's series outlive its last call by a few TTLs (see
		// Metrics in docs/design.md).
		m, err := fn.NewMetrics(prometheus.DefaultRegisterer, fn.WithSeriesExpiry(fn.SeriesExpiryTTLs*c.TTL))
		if err != nil {
			return err
		}
		opts = append(opts, fn.WithMetrics(m))
	}
	return function.Serve(fn.NewFunction(opts...),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSServerCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		function.WithMetricsServer(c.MetricsAddress))
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("A Crossplane composition function that gives every tenant its own Gateway API Gateway with automatic TLS."))
	ctx.FatalIfErrorf(ctx.Run())
}
