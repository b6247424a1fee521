package main

import (
	"fmt"
	"io"
	"sort"
)

// A severity says whether a finding stops the takeover.
type severity string

const (
	// blocker: the takeover would lose traffic, stall or be refused; the
	// script's takeover refuses to start while any is reported, unless
	// told to (MIGRATE_FORCE=1).
	blocker severity = "BLOCKER"
	// warning: a change the operator should know of, that does not stall.
	warning severity = "WARNING"
	// info: what was checked and found in order.
	info severity = "OK"
)

// The topics of the report, one per finding of docs/migration.md's
// pre-flight.
const (
	topicNamespaces = "attached namespaces"
	topicWinners    = "hostname winners"
	topicSpecs      = "TenantGateway specs"
	topicIdentity   = "identity"
	topicCRD        = "CRD ownership"
	topicController = "controller"
)

// topics in the order the report prints them.
var topics = []string{topicNamespaces, topicWinners, topicSpecs, topicIdentity, topicCRD, topicController}

// A finding is one line of the report.
type finding struct {
	Severity severity
	Topic    string
	Text     string
}

// report is every finding of one pre-flight.
type report []finding

func (r *report) add(s severity, topic, format string, args ...any) {
	*r = append(*r, finding{Severity: s, Topic: topic, Text: fmt.Sprintf(format, args...)})
}

// blockers counts the findings that stop the takeover.
func (r report) blockers() int {
	n := 0
	for _, f := range r {
		if f.Severity == blocker {
			n++
		}
	}
	return n
}

// sorted orders the findings by topic, then severity, then text, so the
// report reads the same on every run.
func (r report) sorted() report {
	rank := map[string]int{}
	for i, t := range topics {
		rank[t] = i
	}
	sev := map[severity]int{blocker: 0, warning: 1, info: 2}
	out := append(report(nil), r...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a.Topic] != rank[b.Topic] {
			return rank[a.Topic] < rank[b.Topic]
		}
		if a.Severity != b.Severity {
			return sev[a.Severity] < sev[b.Severity]
		}
		return a.Text < b.Text
	})
	return out
}

// print writes the report, one finding a line, and a verdict.
func (r report) print(w io.Writer) error {
	for _, f := range r.sorted() {
		if _, err := fmt.Fprintf(w, "%-7s %s: %s\n", f.Severity, f.Topic, f.Text); err != nil {
			return fmt.Errorf("cannot write the report: %w", err)
		}
	}
	verdict := "no blocker: the takeover may start"
	if n := r.blockers(); n > 0 {
		verdict = fmt.Sprintf("%d blockers: resolve them before the takeover (docs/migration.md), or run it anyway with MIGRATE_FORCE=1", n)
	}
	if _, err := fmt.Fprintf(w, "preflight: %s\n", verdict); err != nil {
		return fmt.Errorf("cannot write the report: %w", err)
	}
	return nil
}
