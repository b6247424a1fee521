//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Where Envoy Gateway puts the proxy of every Gateway, and the labels of its
// pods.
const (
	envoyGatewayNamespace = "envoy-gateway-system"
	labelProxyName        = "app.kubernetes.io/name"
	labelProxyComponent   = "app.kubernetes.io/component"
	labelManagedBy        = "app.kubernetes.io/managed-by"
)

// playKubelet plays the one part of a kubelet the tests need, for as long
// as they run: Envoy Gateway programs a Gateway only once its proxy
// Deployment has an available replica, and no scheduler, kubelet or Envoy
// binary runs here. So each proxy pod the ReplicaSet controller creates is
// reported running and ready, as a kubelet reports a pod whose containers
// started and passed their readiness probe; the ReplicaSet and Deployment
// controllers (kube-controller-manager) count it available, and Envoy
// Gateway reads that. Nothing else is played: the pod, its ReplicaSet and the
// Deployment's status are theirs.
func playKubelet(c context.Context, cl client.Client, log io.Writer) {
	for {
		if err := readyProxyPods(c, cl); err != nil {
			_, _ = fmt.Fprintln(log, "e2e kubelet:", err)
		}
		select {
		case <-c.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readyProxyPods marks every proxy pod not ready yet ready.
func readyProxyPods(c context.Context, cl client.Client) error {
	pods := &corev1.PodList{}
	sel := client.MatchingLabels{labelProxyName: "envoy", labelProxyComponent: "proxy", labelManagedBy: "envoy-gateway"}
	if err := cl.List(c, pods, client.InNamespace(envoyGatewayNamespace), sel); err != nil {
		return fmt.Errorf("cannot list proxy pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || podReady(p) {
			continue
		}
		before := p.DeepCopy()
		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		p.Status.ContainerStatuses = nil
		for _, ctr := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: ctr.Name, Image: ctr.Image, Ready: true, Started: new(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		if err := cl.Status().Patch(c, p, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("cannot report pod %s/%s ready: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
