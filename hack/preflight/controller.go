package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkController reports the Cozystack controller's state: its
// Deployment runs the TenantGateway reconciler beside seven others (it
// has no value that turns that one off alone), which rewrites the
// Gateways Crossplane applies; the Flux HelmRelease of its chart brings
// replicas: 1 and the CRD back on every reconcile unless suspended.
func checkController(s *snapshot, o options, r *report) {
	found := false
	for _, d := range s.Deployments {
		if d.Namespace != o.ControllerNamespace || d.Name != o.ControllerName {
			continue
		}
		found = true
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		if replicas > 0 || d.Status.Replicas > 0 {
			r.add(blocker, topicController, "Deployment %s/%s runs (%d replicas wanted, %d present): its TenantGateway reconciler rewrites every Gateway Crossplane applies (its ownership check compares the uid only); stop it first (docs/migration.md, step 3)",
				d.Namespace, d.Name, replicas, d.Status.Replicas)
		} else {
			r.add(info, topicController, "Deployment %s/%s is scaled to 0 (and with it the controller's other reconcilers)", d.Namespace, d.Name)
		}
	}
	for _, hr := range s.FluxReleases {
		if hr.GetNamespace() != o.ControllerNamespace || hr.GetName() != o.ControllerName {
			continue
		}
		found = true
		if frozen, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend"); frozen {
			r.add(warning, topicController, "HelmRelease %s/%s is suspended: this component gets no upgrade (and no fix) until it is resumed, which must wait for a chart without the CRD and with the TenantGateway reconciler off", o.ControllerNamespace, o.ControllerName)
		} else {
			r.add(blocker, topicController, "HelmRelease %s/%s is not suspended: Flux's next reconcile restores replicas: 1 and the chart's CRD; suspend it first (docs/migration.md)", o.ControllerNamespace, o.ControllerName)
		}
	}
	if !found {
		r.add(info, topicController, "neither a Deployment nor a Flux HelmRelease %s/%s", o.ControllerNamespace, o.ControllerName)
	}
}
