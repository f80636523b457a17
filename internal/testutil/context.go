package testutil

// context.go holds Context, the context of a test's calls that block.

import (
	"context"
	"testing"
	"time"
)

// Context returns a context that ends when t ends or d has passed, whichever
// comes first: a call that waits on it cannot outlive the test nor hang it.
// It is t's own context, which ends before t's cleanups run: a cleanup that
// waits needs a context of its own.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
