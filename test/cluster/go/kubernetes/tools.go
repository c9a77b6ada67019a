//go:build tools

// Package tools pins the upstream main packages this module builds. The build tag keeps
// it out of every real build; it exists so that `go mod tidy` records their complete
// dependency graph in go.mod/go.sum. Build with, e.g.:
//
//	go build -o kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
