//go:build tools

// Package tools pins the upstream etcd server main package (the root package of
// go.etcd.io/etcd/server/v3) so that `go mod tidy` records its dependency graph.
// Build with: go build -o etcd go.etcd.io/etcd/server/v3
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
