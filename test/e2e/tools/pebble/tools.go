//go:build tools

// Package tools pins Pebble's command, which `make e2e-tools` builds.
package tools

import _ "github.com/letsencrypt/pebble/v2/cmd/pebble"
