//go:build tools

// Package tools pins Helm's command, which `make e2e-tools` builds: the
// migration test installs and upgrades a chart shaped like Cozystack's
// cozystack-controller with it (docs/migration.md).
package tools

import _ "helm.sh/helm/v4/cmd/helm"
