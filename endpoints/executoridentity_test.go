package endpoints_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// victimExecutor is a hand-made executor that records what the driver
// sends it, in order; a ReviveOffers sent to it by the test is a marker:
// everything queued before it has been recorded once it is.
type victimExecutor struct {
	env    *actor.Env
	ref    *actor.Ref
	driver *actor.Ref
	got    chan proto.Message
}

func newVictimExecutor(t *testing.T, nw network, driverURL, id string) *victimExecutor {
	t.Helper()
	v := connectVictim(t, nw, driverURL)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := actor.AskAs[*messages.BoolReply](ctx, v.driver, &messages.RegisterExecutor{
		ExecutorId: id, ExecutorRef: v.ref.Proto(), Hostname: "h", Cores: 1}); err != nil {
		t.Fatal(err)
	}
	return v
}

// connectVictim makes a victimExecutor that has looked the driver up but
// not registered.
func connectVictim(t *testing.T, nw network, driverURL string) *victimExecutor {
	t.Helper()
	env, err := nw.factory("victim", testConf())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
	v := &victimExecutor{env: env, got: make(chan proto.Message, 1024)}
	v.ref, err = env.RegisterEndpoint(endpoints.ExecutorEndpointName, actor.ReceiveFunc(func(_ *actor.Context, msg proto.Message) error {
		v.got <- msg
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if v.driver, err = env.SetupEndpointRefByURI(ctx, driverURL); err != nil {
		t.Fatal(err)
	}
	return v
}

// received returns what the victim was sent before now (the marker's
// turn), in order.
func (v *victimExecutor) received(t *testing.T) []proto.Message {
	t.Helper()
	if err := v.ref.Send(&messages.ReviveOffers{}); err != nil {
		t.Fatal(err)
	}
	var out []proto.Message
	for {
		m := testutil.Recv(t, v.got, testTimeout, "the victim's marker")
		if _, ok := m.(*messages.ReviveOffers); ok {
			return out
		}
		out = append(out, m)
	}
}

func hasType[M proto.Message](ms []proto.Message) bool {
	for _, m := range ms {
		if _, ok := m.(M); ok {
			return true
		}
	}
	return false
}

// A connected executor (b) cannot act on another executor (a) by naming
// it in a message, nor give the driver's own orders: what is about an
// executor must come from the env that executor registered from (one-way
// messages too: the driver endpoint is actor.PeerAware), and the driver's
// internal orders come from its own env only. Before, the driver took the
// executor a message was about from the message.
func TestPeerCannotActForAnotherExecutor(t *testing.T) {
	setup := func(t *testing.T) (*endpoints.Driver, *actor.Env, *victimExecutor, *fakeExecutor) {
		nw := memNetwork()
		env := nw.driverEnv(t, testConf())
		t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
		d, err := endpoints.NewDriver(env)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Stop(context.Background()) })
		a := newVictimExecutor(t, nw, d.URL(), "a")
		b := newFakeExecutor(t, nw, d.URL())
		if err := b.register("b", "h", 1); err != nil {
			t.Fatal(err)
		}
		return d, env, a, b
	}
	// roundTrip asks the driver endpoint from b: b's earlier messages to
	// it have been handled once it returns.
	roundTrip := func(t *testing.T, b *fakeExecutor) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := actor.AskAs[*messages.SparkAppConfig](ctx, b.driver, &messages.RetrieveSparkAppConfig{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("RemoveExecutor", func(t *testing.T) {
		d, _, a, b := setup(t)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, _ = b.driver.AskSync(ctx, &messages.RemoveExecutor{ExecutorId: "a", Reason: "removed by b"})
		if _, ok := executor(d, "a"); !ok {
			t.Error("executor b removed executor a")
		}
		if hasType[*messages.StopExecutor](a.received(t)) {
			t.Error("executor b made the driver send StopExecutor to executor a")
		}
	})

	t.Run("StopExecutors", func(t *testing.T) {
		_, _, a, b := setup(t)
		if err := b.driver.Send(&messages.StopExecutors{}); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, b)
		if hasType[*messages.StopExecutor](a.received(t)) {
			t.Error("executor b's StopExecutors made the driver stop executor a")
		}
	})

	t.Run("StopDriver", func(t *testing.T) {
		_, env, _, b := setup(t)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, _ = b.driver.AskSync(ctx, &messages.StopDriver{})
		if _, ok := env.Endpoint(endpoints.DriverEndpointName); !ok {
			t.Error("executor b stopped the driver's CoarseGrainedScheduler endpoint")
		}
	})

	t.Run("ExecutorDecommissioning", func(t *testing.T) {
		d, _, _, b := setup(t)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, _ = b.driver.AskSync(ctx, &messages.ExecutorDecommissioning{ExecutorId: "a"})
		if ex, _ := executor(d, "a"); ex.Decommissioning {
			t.Error("executor b decommissioned executor a")
		}
	})

	t.Run("LaunchedExecutor", func(t *testing.T) {
		d, _, _, b := setup(t)
		if err := b.driver.Send(&messages.LaunchedExecutor{ExecutorId: "a"}); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, b)
		if ex, _ := executor(d, "a"); ex.Ready {
			t.Error("executor b declared executor a ready for tasks")
		}
	})

	t.Run("KillTask", func(t *testing.T) {
		_, _, a, b := setup(t)
		if err := b.driver.Send(&messages.KillTask{TaskId: 42, ExecutorId: "a", InterruptThread: true, Reason: "b says so"}); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, b)
		if hasType[*messages.KillTask](a.received(t)) {
			t.Error("executor b had the driver forward a KillTask to executor a")
		}
	})

	t.Run("Heartbeat", func(t *testing.T) {
		d, env, _, b := setup(t)
		before := d.LastHeartbeats()["a"]
		hb := b.env.RemoteRef(env.Address(), endpoints.HeartbeatEndpointName)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, _ = hb.AskSync(ctx, &messages.Heartbeat{ExecutorId: "a"})
		if after := d.LastHeartbeats()["a"]; after.After(before) {
			t.Error("executor b's heartbeat for executor a kept a alive")
		}
	})

	t.Run("HeartbeatReceiverBookkeeping", func(t *testing.T) {
		d, env, _, b := setup(t)
		hb := b.env.RemoteRef(env.Address(), endpoints.HeartbeatEndpointName)
		// The driver endpoint's own notices to its HeartbeatReceiver,
		// sent by a peer: forget a (so it never expires), invent ghosts.
		if err := hb.Send(&messages.ExecutorRemoved{ExecutorId: "a"}); err != nil {
			t.Fatal(err)
		}
		for i := range 1000 {
			if err := hb.Send(&messages.ExecutorRegistered{ExecutorId: fmt.Sprintf("ghost-%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := hb.AskSync(ctx, &messages.ExpireDeadHosts{}); !errors.Is(err, actor.ErrUnsupportedMessage) {
			t.Errorf("executor b's ExpireDeadHosts: %v, want an error that matches ErrUnsupportedMessage", err)
		}
		// b's own heartbeat: what b sent before has been handled once it
		// is answered.
		if _, err := hb.AskSync(ctx, &messages.Heartbeat{ExecutorId: "b"}); err != nil {
			t.Fatal(err)
		}
		seen := d.LastHeartbeats()
		if _, ok := seen["a"]; !ok {
			t.Error("executor b took executor a out of the heartbeat receiver's watch: a can no longer expire")
		}
		if len(seen) != len(d.Executors()) {
			t.Errorf("heartbeat receiver tracks %d executors, the driver has %d: a peer added ids at will", len(seen), len(d.Executors()))
		}
	})
}
