package testutil_test

import (
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestRecv(t *testing.T) {
	full := make(chan int, 1)
	full <- 7
	closed := make(chan int)
	close(closed)
	tests := []struct {
		name    string
		ch      chan int
		want    int
		failure string
	}{
		{name: "a value", ch: full, want: 7},
		{name: "closed", ch: closed, want: 0},
		{name: "nothing", ch: make(chan int), failure: "timed out after 1ms waiting for the answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			failure := failed(t, func(tb testing.TB) { got = testutil.Recv(tb, tc.ch, time.Millisecond, "the answer") })
			if failure != tc.failure || got != tc.want {
				t.Fatalf("got %d with failure %q, want %d with %q", got, failure, tc.want, tc.failure)
			}
		})
	}
}
