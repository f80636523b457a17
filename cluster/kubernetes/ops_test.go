package kubernetes

import (
	"errors"
	"testing"
)

func TestParseSubmissionID(t *testing.T) {
	for _, tc := range []struct{ in, ns, pod string }{
		{"spark:app-driver", "spark", "app-driver"}, {"app-*", "default", "app-*"}, {"ns:sparkpi-*-driver", "ns", "sparkpi-*-driver"},
	} {
		ns, pod, err := ParseSubmissionID(tc.in, "default")
		if err != nil || ns != tc.ns || pod != tc.pod {
			t.Errorf("ParseSubmissionID(%q) = %q, %q, %v", tc.in, ns, pod, err)
		}
	}
	for _, bad := range []string{"", "ns:", ":pod", "a:b:c", "NS:pod", "ns:[x"} {
		if _, _, err := ParseSubmissionID(bad, "default"); !errors.Is(err, ErrInvalidSubmissionID) {
			t.Errorf("ParseSubmissionID(%q) = %v", bad, err)
		}
	}
}
