package endpoints_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A driver whose listener is stuck keeps running jobs: its bus holds
// spark.scheduler.listenerbus.eventqueue.capacity events and counts the
// rest as dropped.
func TestListenerBusCapacityOfDriver(t *testing.T) {
	nw := memNetwork()
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	stuck := endpoints.ListenerFunc(func(endpoints.Event) { <-release })
	c := startCluster(t, nw, testConf(endpoints.KeyListenerBusCapacity, "2"), 1, 2, endpoints.WithListener(stuck))
	t.Cleanup(unblock) // runs before the cluster's cleanup, which stops the bus
	payloads := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	res, err := runJob(t, c.Driver, endpoints.EchoTaskName, payloads)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(payloads) {
		t.Fatalf("%d results, want %d", len(res), len(payloads))
	}
	// ExecutorAdded, JobStart, 4 TaskStart, 4 TaskEnd and JobEnd were all
	// posted before RunJob returned, while the listener held the first: the
	// bus kept 2 (the one being delivered counts) and dropped the other 9.
	if n := c.Driver.DroppedEvents(); n != 11-2 {
		t.Fatalf("DroppedEvents() = %d, want 9", n)
	}
	unblock()
}

// The capacity must be a positive integer; the error names the key.
func TestListenerBusCapacityInvalid(t *testing.T) {
	for _, v := range []string{"0", "-1", "many"} {
		t.Run(v, func(t *testing.T) {
			env := memNetwork().driverEnv(t, testConf(endpoints.KeyListenerBusCapacity, v))
			t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
			_, err := endpoints.NewDriver(env)
			var ce *actor.ConfError
			if err == nil || !strings.Contains(err.Error(), endpoints.KeyListenerBusCapacity) ||
				!errors.Is(err, endpoints.ErrInvalidConfig) && !errors.As(err, &ce) {
				t.Fatalf("NewDriver with %s=%s: %v; want an error naming the key", endpoints.KeyListenerBusCapacity, v, err)
			}
		})
	}
}
