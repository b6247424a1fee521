// Command preflight reads a Cozystack platform before TenantGateways are
// taken over from the Cozystack controller and reports what would go wrong
// (docs/migration.md, "Pre-flight"): attached namespaces labelled for
// another owner, hostnames whose serving route changes, specs the function
// refuses, the identity the takeover runs as against the admission
// policies, Helm's hold on the CRD and the controller's state. It changes
// nothing. It exits 0 without a blocker, 3 with one, 1 when it cannot read
// the cluster. hack/migrate-from-cozystack.sh runs it before every takeover; docs/migration.md documents its flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// exitBlockers is the exit code when the report holds a blocker.
const exitBlockers = 3

func main() {
	o := defaultOptions()
	flag.StringVar(&o.Kubeconfig, "kubeconfig", "", "the kubeconfig of the cluster to read (default $KUBECONFIG, else ~/.kube/config)")
	flag.StringVar(&o.CertManagerNamespace, "cert-manager-namespace", o.CertManagerNamespace, "the namespace of cert-manager's HTTP-01 challenge routes")
	flag.StringVar(&o.ControllerNamespace, "controller-namespace", o.ControllerNamespace, "the namespace of the Cozystack controller's Deployment and HelmRelease")
	flag.StringVar(&o.ControllerName, "controller-name", o.ControllerName, "the name of the Cozystack controller's Deployment and HelmRelease")
	flag.StringVar(&o.TrustedCallers, "trusted-callers", o.TrustedCallers, "the EnvironmentConfig the admission policies read")
	flag.StringVar(&o.Only, "tenantgateway", "", "namespace/name: report on this TenantGateway only (besides the CRD, the controller and the identity)")
	flag.Parse()
	err := run(o)
	switch {
	case errors.Is(err, errBlockers):
		os.Exit(exitBlockers)
	case err != nil:
		fmt.Fprintln(os.Stderr, "preflight:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := live.Connect(o.Kubeconfig)
	if err != nil {
		return err
	}
	objs, err := read(ctx, c, o)
	if err != nil {
		return err
	}
	s, err := newSnapshot(objs)
	if err != nil {
		return err
	}
	r := preflight(s, o)
	if err := r.print(os.Stdout); err != nil {
		return err
	}
	if r.blockers() > 0 {
		return errBlockers
	}
	return nil
}
