package webui_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/webui"
)

// ClipText keeps a short text as it is, and cuts a long one at a whole
// UTF-8 sequence, saying how long it was.
func TestClipText(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"toolong", 3, "too… (7 bytes in all)"},
		{"héllo", 2, "h… (6 bytes in all)"}, // é is 2 bytes: not cut in its middle
		{"héllo", 3, "hé… (6 bytes in all)"},
	} {
		if got := webui.ClipText(c.s, c.n); got != c.want {
			t.Errorf("ClipText(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
