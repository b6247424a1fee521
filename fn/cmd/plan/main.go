// Command plan shows, before an upgrade of the Function or a change of the
// platform settings, what this build would change on a live platform. With
// a kubeconfig and read-only rights it reads every TenantGateway and
// XTenant with what Crossplane would hand the function (the XR, its
// composed resources, the resources the function requires, resolved as
// Crossplane's requirement loop resolves them, the step's input from the
// installed Composition), runs this build's function on each in-process,
// and lists per composite resource what would change against what is live:
// listeners added, removed or renamed, routes that would lose or change
// their listener, Certificates ordered anew, namespace labels, composed
// objects, status conditions. It changes nothing. It exits 0 when nothing
// served would change, 2 when something would, 1 when it cannot plan.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-tenant-gateway/fn/live"
)

// Exit codes beside 0.
const (
	exitError   = 1
	exitChanges = 2
)

var errChanges = errors.New("what is served would change")

func main() {
	o := defaultOptions()
	flag.StringVar(&o.Kubeconfig, "kubeconfig", "", "the kubeconfig of the cluster to plan against, read only (default $KUBECONFIG, else ~/.kube/config)")
	flag.StringVar(&o.Settings, "platform-settings", "", "a file holding proposed platform settings (an EnvironmentConfig, as examples/cluster/platform.yaml), planned in place of the live one of its name")
	flag.StringVar(&o.Function, "function", o.Function, "the name of the installed Function whose pipeline step this build is run in place of")
	flag.BoolVar(&o.JSON, "json", false, "write the plan as JSON")
	flag.IntVar(&o.MaxChanges, "max-changes", o.MaxChanges, "the most changes the summary lists per composite resource")
	flag.IntVar(&o.MaxXRs, "max-xrs", o.MaxXRs, "the most composite resources the summary lists")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long the plan may take")
	flag.Parse()
	os.Exit(plan(o, *timeout))
}

// plan runs the plan and returns the exit code, so that main exits after
// its deferred cancellations have run.
func plan(o options, timeout time.Duration) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := run(ctx, o)
	switch {
	case errors.Is(err, errChanges):
		return exitChanges
	case err != nil:
		fmt.Fprintln(os.Stderr, "plan:", err)
		return exitError
	}
	return 0
}

func run(ctx context.Context, o options) error {
	// The settings file first: a typo in its name fails before the cluster
	// is read.
	var settings *unstructured.Unstructured
	if o.Settings != "" {
		s, err := readSettings(o.Settings)
		if err != nil {
			return err
		}
		settings = s
	}
	r, err := live.Connect(o.Kubeconfig)
	if err != nil {
		return err
	}
	return planAndPrint(ctx, r, o, settings, os.Stdout)
}
