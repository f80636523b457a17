package testutil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestContextEndsAtItsDeadline(t *testing.T) {
	ctx := testutil.Context(t, time.Millisecond)
	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("no deadline")
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context did not end at its deadline")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", ctx.Err())
	}
}

func TestContextEndsWithTheTest(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) {
		ctx = testutil.Context(t, time.Hour)
		if ctx.Err() != nil {
			t.Fatalf("ended early: %v", ctx.Err())
		}
	})
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after the test: err = %v, want Canceled", ctx.Err())
	}
}
