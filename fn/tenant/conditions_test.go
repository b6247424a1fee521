package tenant

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAcceptance(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		want   Condition
		ok     bool
	}{
		"Derived": {
			reason: "A derived tenant is Accepted, naming the claim",
			want:   Condition{Type: ConditionAccepted, Status: true, Reason: ReasonDerived, Message: "Tenant tenant-root/alpha was derived from its spec and the platform settings"},
			ok:     true,
		},
		"Refused": {
			reason: "A refusal, however wrapped, is Accepted False with the refusal's own message",
			err:    fmt.Errorf("cannot derive: %w", refuse("tenant name %q is too long", "alpha")),
			want:   Condition{Type: ConditionAccepted, Reason: ReasonRefused, Message: `tenant name "alpha" is too long`},
			ok:     true,
		},
		"FunctionFailure": {
			reason: "Any other error is the function's own failure: no condition",
			err:    errors.New("cannot encode"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Acceptance("alpha", "tenant-root", tc.err)
			if ok != tc.ok {
				t.Fatalf("%s\nAcceptance(...): ok %t, want %t", tc.reason, ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nAcceptance(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
