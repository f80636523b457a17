package testutil_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func isOpen(g *testutil.Gate) bool {
	select {
	case <-g.Opened():
		return true
	default:
		return false
	}
}

func TestGateOpensOnce(t *testing.T) {
	g := testutil.NewGate(t)
	if isOpen(g) {
		t.Fatal("a new gate is open")
	}
	g.Open()
	g.Open() // again: no panic
	if !isOpen(g) {
		t.Fatal("the gate is closed after Open")
	}
}

func TestGateOpensWhenTheTestEnds(t *testing.T) {
	var g *testutil.Gate
	t.Run("inner", func(t *testing.T) { g = testutil.NewGate(t) })
	if !isOpen(g) {
		t.Fatal("the gate is still closed after its test")
	}
}

func TestGates(t *testing.T) {
	var gs testutil.Gates
	k1, g1 := gs.New(t)
	k2, _ := gs.New(t)
	if k1 == k2 || !strings.HasPrefix(k1, t.Name()) {
		t.Fatalf("keys %q and %q: want distinct keys that start with the test's name", k1, k2)
	}
	ctx := testutil.Context(t, time.Minute)
	waited := make(chan error, 1)
	go func() { waited <- gs.Wait(ctx, k1) }()
	g1.Open()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("Wait on an opened gate: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Wait did not return once its gate opened")
	}

	cause := errors.New("killed")
	cctx, cancel := context.WithCancelCause(ctx)
	cancel(cause)
	if err := gs.Wait(cctx, k2); !errors.Is(err, cause) {
		t.Fatalf("Wait with an ended context: %v, want its cause", err)
	}
	if err := gs.Wait(ctx, "nobody"); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("Wait on an unknown key: %v, want an error naming it", err)
	}
}

func TestGateArrived(t *testing.T) {
	var gs testutil.Gates
	key, g := gs.New(t)
	ctx := testutil.Context(t, time.Minute)
	two := g.Arrived(2)
	go func() { _ = gs.Wait(ctx, key) }()
	testutil.Recv(t, g.Arrived(1), time.Minute, "the first wait")
	select {
	case <-two:
		t.Fatal("Arrived(2) is closed after one wait")
	default:
	}
	go func() { _ = gs.Wait(ctx, key) }()
	testutil.Recv(t, two, time.Minute, "the second wait")
	testutil.Recv(t, g.Arrived(2), time.Minute, "a watch made after the waits")
	g.Open()
}
