package main

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The flag of the controller's manager that docs/migration.md proposes to
// Cozystack (proposal 1): the reconcilers it names are not started. No
// Deployment carries it until Cozystack ships it.
const (
	flagDisableControllers = "--disable-controllers"
	reconcilerTenantGW     = "tenantgateway"
)

// checkController reports the Cozystack controller's state: its
// Deployment runs the TenantGateway reconciler beside seven others (until
// Cozystack ships a flag that turns that one off alone), which rewrites
// the Gateways Crossplane applies; the Flux HelmRelease of its chart
// brings replicas: 1 and the CRD back on the release's next upgrade (a
// new chart or new values: every platform upgrade; cozystack-operator
// writes it without drift detection, so an idle reconcile changes
// nothing) unless suspended, or unless its chart no longer renders the
// CRD and runs without the TenantGateway reconciler (proposals 1 and 2).
func checkController(s *snapshot, o options, r *report) {
	found, reconcilerOff := checkDeployment(s, o, r)
	if checkFluxRelease(s, o, r, reconcilerOff) {
		found = true
	}
	if !found {
		r.add(info, topicController, "neither a Deployment nor a Flux HelmRelease %s/%s", o.ControllerNamespace, o.ControllerName)
	}
}

// checkDeployment judges the controller's Deployment: whether it is there,
// and whether it runs without the TenantGateway reconciler.
func checkDeployment(s *snapshot, o options, r *report) (found, reconcilerOff bool) {
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace != o.ControllerNamespace || d.Name != o.ControllerName {
			continue
		}
		found = true
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		switch {
		case tenantGatewayReconcilerOff(d):
			reconcilerOff = true
			r.add(info, topicController, "Deployment %s/%s runs without the TenantGateway reconciler (%s=%s)", d.Namespace, d.Name, flagDisableControllers, reconcilerTenantGW)
		case replicas > 0 || d.Status.Replicas > 0:
			r.add(blocker, topicController, "Deployment %s/%s runs (%d replicas wanted, %d present): its TenantGateway reconciler rewrites every Gateway Crossplane applies (its ownership check compares the uid only); stop it first (docs/migration.md, step 3)",
				d.Namespace, d.Name, replicas, d.Status.Replicas)
		default:
			r.add(info, topicController, "Deployment %s/%s is scaled to 0 (and with it the controller's other reconcilers)", d.Namespace, d.Name)
		}
	}
	return found, reconcilerOff
}

// checkFluxRelease judges the Flux HelmRelease of the controller's chart,
// and reports whether there is one.
func checkFluxRelease(s *snapshot, o options, r *report, reconcilerOff bool) (found bool) {
	for _, hr := range s.FluxReleases {
		if hr.GetNamespace() != o.ControllerNamespace || hr.GetName() != o.ControllerName {
			continue
		}
		found = true
		frozen, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend")
		switch {
		case frozen:
			r.add(warning, topicController, "HelmRelease %s/%s is suspended: this component gets no upgrade (and no fix) until it is resumed, which must wait for a chart without the CRD and with the TenantGateway reconciler off", o.ControllerNamespace, o.ControllerName)
		case reconcilerOff && !releaseRendersCRD(s, o.ControllerNamespace, o.ControllerName):
			r.add(info, topicController, "HelmRelease %s/%s is not suspended, and its release no longer renders the CRD and runs without the TenantGateway reconciler", o.ControllerNamespace, o.ControllerName)
		default:
			r.add(blocker, topicController, "HelmRelease %s/%s is not suspended: Flux's next upgrade of the release (every platform upgrade brings a new chart) restores replicas: 1 and applies the chart's CRD again; suspend it first (docs/migration.md)", o.ControllerNamespace, o.ControllerName)
		}
	}
	return found
}

// tenantGatewayReconcilerOff: a container of the Deployment passes the
// proposed flag naming the TenantGateway reconciler (--flag=a,b or --flag
// a,b).
func tenantGatewayReconcilerOff(d *appsv1.Deployment) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		args := append(slices.Clone(c.Command), c.Args...)
		for i, a := range args {
			var v string
			switch {
			case strings.HasPrefix(a, flagDisableControllers+"="):
				v = strings.TrimPrefix(a, flagDisableControllers+"=")
			case a == flagDisableControllers && i+1 < len(args):
				v = args[i+1]
			default:
				continue
			}
			if slices.Contains(strings.Split(v, ","), reconcilerTenantGW) {
				return true
			}
		}
	}
	return false
}

// releaseRendersCRD: the last deployed revision of the release still
// renders the TenantGateway CRD (or cannot be read).
func releaseRendersCRD(s *snapshot, ns, name string) bool {
	sec := lastRelease(s.HelmReleases, ns, name)
	if sec == nil {
		return false
	}
	manifest, err := releaseManifest(sec)
	if err != nil {
		return true
	}
	_, ok := crdDocument(manifest)
	return ok
}
