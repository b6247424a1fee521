package kube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is a typed Kubernetes object the function composes.
type Object interface {
	runtime.Object
	metav1.Object
}

// Resource is one composed object under its stable composition resource name.
type Resource struct {
	Key    string
	Object Object
}
