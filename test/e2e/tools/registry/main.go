// Command registry serves an OCI registry on a loopback address for the
// end-to-end tests, so that `crossplane xpkg push` and `crossplane xpkg
// install` run the way they do against a real registry, dependency
// resolution (tag listing and version constraints) included. Blobs live on
// disk under --dir, so a restarted registry keeps what was pushed.
//
// Plain HTTP is enough: go-containerregistry, which both the Crossplane CLI
// and Crossplane core use, speaks HTTP to loopback registries.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("address", "127.0.0.1:5000", "loopback address to listen on")
	dir := flag.String("dir", "", "directory for blobs (required)")
	flag.Parse()
	if err := serve(*addr, *dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func serve(addr, dir string) error {
	if dir == "" {
		return errors.New("--dir is required")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("cannot parse --address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--address %q: only loopback IPs are allowed", addr)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cannot create --dir: %w", err)
	}
	h := registry.New(
		registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)),
		registry.Logger(log.New(os.Stderr, "registry ", log.LstdFlags)),
	)
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("serving an OCI registry on http://%s (blobs in %s)", addr, dir)
	return srv.ListenAndServe()
}
