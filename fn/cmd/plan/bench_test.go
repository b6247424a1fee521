package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPlan plans a platform of 1,000 gateway-owning tenants (1,000
// XTenants and 1,000 TenantGateways, each with two routes and its Gateway,
// Issuer, Certificates and redirect) in the steady state, read through a
// fake client: every kind listed once, every TenantGateway and XTenant run
// through Crossplane's requirement loop in-process and compared with what
// is live. The plan must finish in under a minute (docs/benchmarks.md).
func BenchmarkPlan(b *testing.B) {
	for _, n := range benchTenants {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			p := tenantPlatform(b, n)
			b.ResetTimer()
			cpu := cpuTime(b)
			for b.Loop() {
				res, err := newPlanner(p.reader(), defaultOptions()).plan(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if len(res.XRs) != 0 || res.Planned[kindTenantGateway] != n || res.Planned[kindXTenant] != n {
					b.Fatalf("a steady platform of %d tenants planned %v with %d changing", n, res.Planned, len(res.XRs))
				}
			}
			// Wall time depends on what else the machine runs; the
			// process's CPU time per plan does not.
			b.ReportMetric((cpuTime(b)-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// benchTenants are the platform sizes BenchmarkPlan plans.
var benchTenants = []int{1000}
