//go:build tools

// Package tools pins Metacontroller's main package so that `go mod tidy` records its
// dependency graph. Build with: go build -o metacontroller metacontroller/pkg/cmd/metacontroller
package tools

import (
	_ "metacontroller/pkg/cmd/metacontroller"
)
