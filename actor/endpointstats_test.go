package actor_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// EndpointStats shows a blocked endpoint's queue and, once it is released,
// the messages it handled.
func TestEndpointStats(t *testing.T) {
	e := newEnv(t, nil)
	g := testutil.NewGate(t)
	entered := make(chan struct{}, 1)
	ref := register(t, e, "stats-slow", actor.ReceiveFunc(func(_ *actor.Context, _ proto.Message) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-g.Opened()
		return nil
	}))
	register(t, e, "stats-idle", actor.ReceiveFunc(func(*actor.Context, proto.Message) error { return nil }))
	for range 4 {
		if err := ref.Send(str("m")); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Recv(t, entered, testTimeout, "the first message")
	find := func(name string) actor.EndpointStats {
		for _, s := range e.EndpointStats() {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no stats for %s in %v", name, e.EndpointStats())
		return actor.EndpointStats{}
	}
	stats := e.EndpointStats()
	if len(stats) < 2 || stats[0].Name > stats[1].Name {
		t.Fatalf("stats not sorted by name: %v", stats)
	}
	// Every message posted is received; the loop took the first and may
	// hold others as its batch, so at most 3 are queued.
	if s := find("stats-slow"); s.Received != 4 || s.Queued > 3 {
		t.Fatalf("stats-slow: %+v, want 4 received, at most 3 queued", s)
	}
	g.Open()
	testutil.Eventually(t, testTimeout, "stats-slow to show its 4 messages handled", func() bool {
		s := find("stats-slow")
		return s.Queued == 0 && s.Received == 4
	})
	if s := find("stats-idle"); s.Queued != 0 {
		t.Fatalf("stats-idle: %+v, want nothing queued", s)
	}
}
