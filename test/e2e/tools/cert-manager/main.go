// Command cert-manager-controllers starts cert-manager's own ACME
// controllers out of cluster for the end-to-end tests: the certificates
// controllers, the approver and the ACME CertificateRequest issuer, orders,
// challenges and issuers. cert-manager's cmd/controller module is not served
// by the Go module proxy; its main module is, and pkg/controller keeps a
// registry of controller constructors (filled by the imports below) and a
// context factory. This is the least wiring that starts them: the options
// set here are listed in docs/development.md (End to end, cert-manager).
//
// Run as `cert-manager-controllers acmesolver --listen-port=… --domain=…
// --token=… --key=…` it is instead the HTTP-01 solver of cert-manager's
// acmesolver image (whose cmd/acmesolver module is not served either): the
// solver package of the main module, with the arguments cert-manager gives
// the solver Pod's container. The tests run one such process for each
// solver Pod (test/e2e/solver_test.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	// Each import registers its controllers with pkg/controller.
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/acme"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The ACME issuer type, which the issuers controller sets up.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/issuer/acme/http/solver"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// controllers are the names the imports above register, in the order they
// are started. certificaterequests-approver stands in for an approver policy:
// without it no CertificateRequest is approved and nothing is issued.
var controllers = []string{
	"issuers",
	"certificates-trigger", "certificates-key-manager", "certificates-request-manager",
	"certificates-issuing", "certificates-readiness", "certificates-revision-manager",
	"certificaterequests-approver", "certificaterequests-issuer-acme",
	"orders", "challenges",
}

// workers per controller: cert-manager's default (--concurrent-workers).
// A DNS-01 check holds its worker for a fixed 60 s, so fewer workers
// serialise the challenges of a certificate with several names.
const workers = 5

func main() {
	if len(os.Args) > 1 && os.Args[1] == "acmesolver" {
		if err := acmesolver(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "acmesolver:", err)
			os.Exit(1)
		}
		return
	}
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	namespace := flag.String("namespace", "", "the only namespace to watch; empty watches all")
	nameservers := flag.String("dns01-recursive-nameservers", "", "comma-separated host:port the DNS-01 self-check asks, and only them")
	http01Nameservers := flag.String("acme-http01-solver-nameservers", "", "comma-separated host:port the HTTP-01 self-check resolves the challenge's name with")
	retry := flag.Duration("dns01-check-retry-period", 10*time.Second, "how long the DNS-01 self-check waits between tries")
	ownerRef := flag.Bool("enable-certificate-owner-ref", false, "make each Certificate the owner of its Secret, so that the Secret goes with it")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background())
	if err := run(ctx, *kubeconfig, *namespace, *nameservers, *http01Nameservers, *retry, *ownerRef); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-controllers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, namespace, nameservers, http01Nameservers string, retry time.Duration, ownerRef bool) error {
	opts := controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		Namespace:          namespace,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: "cert-manager"},
		ACMEOptions: controllerpkg.ACMEOptions{
			// The nameservers given are asked directly, as
			// --dns01-recursive-nameservers-only does: the test apex has
			// no delegation from any real parent zone.
			DNS01Nameservers:      splitList(nameservers),
			DNS01CheckRetryPeriod: retry,
			// The HTTP-01 self-check resolves the challenge's name
			// where Pebble does: the test zones have no delegation
			// either. The solver Pod's image is never pulled (the
			// tests run this binary in its place) but must be set.
			HTTP01SolverNameservers: splitList(http01Nameservers),
			HTTP01SolverImage:       "quay.io/jetstack/cert-manager-acmesolver:" + version,
			// cert-manager's default (--acme-http01-solver-run-as-non-root).
			ACMEHTTP01SolverRunAsNonRoot: true,
			// cert-manager's defaults (--acme-http01-solver-resource-*).
			HTTP01SolverResourceRequestCPU:    resource.MustParse("10m"),
			HTTP01SolverResourceRequestMemory: resource.MustParse("64Mi"),
			HTTP01SolverResourceLimitsCPU:     resource.MustParse("100m"),
			HTTP01SolverResourceLimitsMemory:  resource.MustParse("64Mi"),
		},
		// cert-manager's own defaults for a failed request's backoff.
		CertificateOptions: controllerpkg.CertificateOptions{
			EnableOwnerRef:                           ownerRef,
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
		SchedulerOptions: controllerpkg.SchedulerOptions{MaxConcurrentChallenges: 60},
		ConfigOptions:    controllerpkg.ConfigOptions{EnableGatewayAPI: true},
	}
	factory, err := controllerpkg.NewContextFactory(ctx, opts)
	if err != nil {
		return fmt.Errorf("cannot create the controller context: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range controllers {
		newController, ok := controllerpkg.Known()[name]
		if !ok {
			return fmt.Errorf("cannot find controller %q among those registered", name)
		}
		c, err := newController(factory)
		if err != nil {
			return fmt.Errorf("cannot create controller %q: %w", name, err)
		}
		g.Go(func() error { return c.Run(workers, gctx) })
	}
	// The controllers registered their informers on the shared factories
	// while being created; every Context the factory builds shares them.
	shared, err := factory.Build("informers")
	if err != nil {
		return fmt.Errorf("cannot build the informers' context: %w", err)
	}
	shared.KubeSharedInformerFactory.Start(gctx.Done())
	shared.SharedInformerFactory.Start(gctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(gctx.Done())
	if shared.GatewaySolverEnabled {
		shared.GWShared.Start(gctx.Done())
	}
	klog.InfoS("controllers started", "controllers", strings.Join(controllers, ","), "namespace", namespace)
	return g.Wait()
}

// version is the cert-manager release the solver image names.
const version = "v1.21.2"

// acmesolver serves one HTTP-01 challenge as cert-manager's acmesolver
// image does, with the flags its Pod's container is given.
func acmesolver(args []string) error {
	fs := flag.NewFlagSet("acmesolver", flag.ContinueOnError)
	s := &solver.HTTP01Solver{}
	fs.IntVar(&s.ListenPort, "listen-port", 8089, "the port to listen on")
	fs.StringVar(&s.Domain, "domain", "", "the domain name to verify")
	fs.StringVar(&s.Token, "token", "", "the challenge token to verify against")
	fs.StringVar(&s.Key, "key", "", "the challenge key to respond with")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.Domain == "" || s.Token == "" || s.Key == "" {
		return fmt.Errorf("--domain, --token and --key are required, got %q", args)
	}
	return s.Listen(klog.Background())
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
