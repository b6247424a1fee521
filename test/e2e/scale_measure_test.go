//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// scaleComponents are the processes whose CPU and memory TestScale reads,
// by the name of their PID file in up.sh's run folder.
var scaleComponents = []string{"crossplane", "provider-kubernetes", "function"}

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in
// /proc/PID/stat: 100 on every Linux architecture Go supports.
const clockTicks = 100

// components reads the PIDs up.sh recorded for the processes it started.
func components(t *testing.T) map[string]int {
	t.Helper()
	dir := os.Getenv("E2E_DIR")
	if dir == "" {
		t.Fatal("E2E_DIR is not set: run TestScale with make scale")
	}
	out := map[string]int{}
	for _, c := range scaleComponents {
		b, err := os.ReadFile(filepath.Join(dir, "run", c+".pid"))
		if err != nil {
			t.Fatalf("cannot read the PID of %s: %v", c, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("cannot read the PID of %s: %v", c, err)
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		t.Logf("%s: PID %d, %s", c, pid, exe)
		out[c] = pid
	}
	return out
}

// sample is the counters at one instant: API server requests by "VERB
// resource", CPU seconds and resident bytes by component, function calls.
type sample struct {
	at    time.Time
	api   map[string]float64
	cpu   map[string]float64
	rss   map[string]float64
	calls float64
	load  string
}

func sampleNow(t *testing.T, procs map[string]int) sample {
	t.Helper()
	s := sample{at: time.Now(), api: apiRequests(t), cpu: map[string]float64{}, rss: map[string]float64{}, calls: functionCalls(t), load: loadavg()}
	for c, pid := range procs {
		cpu, rss, err := procUsage(pid)
		if err != nil {
			t.Fatalf("cannot read the usage of %s (PID %d): %v", c, pid, err)
		}
		s.cpu[c], s.rss[c] = cpu, rss
	}
	return s
}

// measure samples, waits d, samples again, and returns the difference.
func measure(t *testing.T, procs map[string]int, d time.Duration) delta {
	t.Helper()
	before := sampleNow(t, procs)
	time.Sleep(d)
	return sampleNow(t, procs).minus(before)
}

// delta is what happened between two samples: rates per second, and the
// resident memory at the end.
type delta struct {
	seconds  float64
	api      map[string]float64 // requests per second by "VERB resource"
	cpu, rss map[string]float64 // cores; bytes at the end
	calls    float64            // per second
	load     string             // load average at the end
}

func (s sample) minus(o sample) delta {
	d := delta{seconds: s.at.Sub(o.at).Seconds(), api: map[string]float64{}, cpu: map[string]float64{}, rss: s.rss, load: s.load}
	for k, v := range s.api {
		if r := (v - o.api[k]) / d.seconds; r > 0 {
			d.api[k] = r
		}
	}
	for k, v := range s.cpu {
		d.cpu[k] = (v - o.cpu[k]) / d.seconds
	}
	d.calls = (s.calls - o.calls) / d.seconds
	return d
}

func (d delta) totalAPI() float64 {
	var n float64
	for _, v := range d.api {
		n += v
	}
	return n
}

// top is the n busiest request kinds, busiest first.
func (d delta) top(n int) []rate {
	out := make([]rate, 0, len(d.api))
	for k, v := range d.api {
		out = append(out, rate{What: k, PerSecond: round2(v)})
	}
	slices.SortFunc(out, func(a, b rate) int {
		if a.PerSecond != b.PerSecond {
			if a.PerSecond > b.PerSecond {
				return -1
			}
			return 1
		}
		return strings.Compare(a.What, b.What)
	})
	return out[:min(n, len(out))]
}

func (d delta) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%.1f API requests/s (", d.totalAPI())
	for i, r := range d.top(8) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f", r.What, r.PerSecond)
	}
	b.WriteString(")")
	for _, c := range scaleComponents {
		fmt.Fprintf(&b, "; %s %.1f%% of a core, %.0f MiB", c, 100*d.cpu[c], d.rss[c]/(1<<20))
	}
	fmt.Fprintf(&b, "; %.2f function calls/s; load %s", d.calls, d.load)
	return b.String()
}

// summary is what a run records of a delta.
func (d delta) summary() scalePhase {
	p := scalePhase{Seconds: round2(d.seconds), APIPerSecond: round2(d.totalAPI()), Top: d.top(12), CPU: map[string]float64{}, RSSMiB: map[string]float64{},
		CallsPerSecond: round2(d.calls), Load: d.load}
	for _, c := range scaleComponents {
		p.CPU[c] = round2(100 * d.cpu[c])
		p.RSSMiB[c] = round2(d.rss[c] / (1 << 20))
	}
	return p
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// procUsage reads a process's CPU seconds (user and system) from
// /proc/PID/stat and its resident set from /proc/PID/status.
func procUsage(pid int) (cpuSeconds, rssBytes float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("cannot parse the CPU times in /proc/%d/stat", pid)
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, 0, fmt.Errorf("cannot parse VmRSS in /proc/%d/status: %w", pid, err)
			}
			return (utime + stime) / clockTicks, kb * 1024, nil
		}
	}
	return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

// apiRequests scrapes the API server's apiserver_request_total and sums it
// by "VERB resource" (resource.group/subresource).
func apiRequests(t *testing.T) map[string]float64 {
	t.Helper()
	hc, err := rest.HTTPClientFor(restCfg)
	if err != nil {
		t.Fatalf("cannot make an HTTP client for the API server: %v", err)
	}
	rsp, err := hc.Get(strings.TrimSuffix(restCfg.Host, "/") + "/metrics") //nolint:noctx // bounded by the client's timeout
	if err != nil {
		t.Fatalf("cannot scrape the API server's metrics: %v", err)
	}
	defer rsp.Body.Close()
	out, err := parseRequests(rsp.Body)
	if err != nil {
		t.Fatalf("cannot read the API server's metrics: %v", err)
	}
	return out
}

// parseRequests sums apiserver_request_total in Prometheus' text format by
// "VERB resource".
func parseRequests(r io.Reader) (map[string]float64, error) {
	const metric = "apiserver_request_total{"
	out := map[string]float64{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		l, ok := strings.CutPrefix(s.Text(), metric)
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(l, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("cannot parse %q: %w", s.Text(), err)
		}
		m := promLabels(labels)
		what := m["resource"]
		if m["group"] != "" {
			what += "." + m["group"]
		}
		if m["subresource"] != "" {
			what += "/" + m["subresource"]
		}
		if what == "" {
			what = "(non-resource)"
		}
		out[m["verb"]+" "+what] += v
	}
	return out, s.Err()
}

// promLabels parses `a="x",b="y"`; the values apiserver_request_total
// carries hold no quotes or commas.
func promLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// functionCalls is the function's calls so far, every XR kind and outcome
// (function_tenant_gateway_calls_total).
func functionCalls(t *testing.T) float64 {
	t.Helper()
	rsp, err := http.Get(functionMetrics) //nolint:noctx // a loopback scrape in a test
	if err != nil {
		t.Fatalf("cannot scrape the function's metrics: %v", err)
	}
	defer rsp.Body.Close()
	var n float64
	s := bufio.NewScanner(rsp.Body)
	for s.Scan() {
		l, ok := strings.CutPrefix(s.Text(), "function_tenant_gateway_calls_total{")
		if !ok {
			continue
		}
		if _, v, ok := strings.Cut(l, "} "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				n += f
			}
		}
	}
	return n
}
