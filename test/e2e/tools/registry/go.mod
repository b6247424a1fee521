// Tools module of the loopback OCI registry the end-to-end tests push the
// packages to and Crossplane installs them from.
module github.com/cozystack/function-tenant-gateway/test/e2e/tools/registry

go 1.26.0

require github.com/google/go-containerregistry v0.21.7

require (
	github.com/docker/docker-credential-helpers v0.9.5 // indirect
	github.com/klauspost/compress v1.18.7 // indirect
	golang.org/x/mod v0.40.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/tools v0.49.0 // indirect
)
