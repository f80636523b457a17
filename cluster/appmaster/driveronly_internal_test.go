package appmaster

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// The application master takes its orders (request executors, kill
// executors, the client-mode driver's end) from its driver only, as the
// driver takes its own orders from its own env only (docs/security.md: "the
// driver still keeps one executor from steering it against another").
// Before, any env that reached the AM's endpoint with the application's
// key, an executor of the application among them, could have another
// executor's container killed, raise the target to any number, or, in
// client mode, end the application as SUCCEEDED while its driver ran.
func TestAMTakesOrdersFromItsDriverOnly(t *testing.T) {
	net := actor.NewMemNetwork()
	newEnv := func(name string, tr actor.Transport) *actor.Env {
		env, err := actor.NewEnv(name, nil, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		return env
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("cluster mode", func(t *testing.T) {
		// The AM's endpoint lives on the driver's env.
		driverEnv := newEnv("driver", net.Transport("driver", 1))
		execEnv := newEnv("executor", net.Transport("exec", 2))
		rm, err := driverEnv.RegisterEndpoint("rm", startingRM{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := newAllocator(driverEnv, rm, "application_1_0001", "spark://CoarseGrainedScheduler@driver:1", 1,
			cluster.Resource{MemoryMB: 512, Cores: 1}, actor.NewConf(), zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		actx, stop := context.WithCancel(context.Background())
		defer func() { stop(); a.starts.Wait() }()
		a.launch(actx, &messages.RmContainer{ContainerId: "container_1_0001_01_000002", NodeId: "n:1", NodeHost: "n",
			Resource: &messages.RmResource{MemoryMb: 512, Cores: 1}})
		ep := newAMEndpoint(context.Background(), zerolog.Nop(), nil, nil)
		ep.alloc.Store(a)
		own, err := driverEnv.RegisterEndpoint(cluster.AMEndpointName, ep)
		if err != nil {
			t.Fatal(err)
		}
		fromExecutor := execEnv.RemoteRef(driverEnv.Address(), cluster.AMEndpointName)

		_, err = actor.AskAs[*messages.AmBoolResponse](ctx, fromExecutor, &messages.AmKillExecutors{ExecutorIds: []string{"1"}})
		a.mu.Lock()
		released := len(a.release)
		a.mu.Unlock()
		if err == nil || released != 0 {
			t.Errorf("an executor's AmKillExecutors of executor 1: err %v, %d containers released; want it refused", err, released)
		}
		_, err = actor.AskAs[*messages.AmBoolResponse](ctx, fromExecutor, &messages.AmRequestExecutors{Total: 1 << 30})
		a.mu.Lock()
		target := a.target
		a.mu.Unlock()
		if err == nil || target != 1 {
			t.Errorf("an executor's AmRequestExecutors: err %v, target %d; want it refused, target 1", err, target)
		}
		// The driver, on the same env, still gives them.
		if _, err := actor.AskAs[*messages.AmBoolResponse](ctx, own, &messages.AmRequestExecutors{Total: 2}); err != nil {
			t.Fatalf("the driver's AmRequestExecutors: %v", err)
		}
	})

	t.Run("client mode", func(t *testing.T) {
		amEnv := newEnv("am", net.Transport("am", 3))
		driverEnv := newEnv("driver", net.Transport("clientdriver", 4))
		execEnv := newEnv("executor", net.Transport("exec2", 5))
		driverRef := amEnv.RemoteRef(driverEnv.Address(), "CoarseGrainedScheduler")
		finished := make(chan *messages.AmDriverFinished, 1)
		actx, stop := context.WithCancel(context.Background())
		defer stop()
		if _, err := amEnv.RegisterEndpoint(cluster.AMEndpointName, newAMEndpoint(actx, zerolog.Nop(), driverRef, finished)); err != nil {
			t.Fatal(err)
		}
		end := &messages.AmDriverFinished{FinalStatus: messages.RmFinalStatus(cluster.FinalSucceeded)}
		fromExecutor := execEnv.RemoteRef(amEnv.Address(), cluster.AMEndpointName)
		_, err := actor.AskAs[*messages.AmBoolResponse](ctx, fromExecutor, end)
		select {
		case <-finished:
			t.Errorf("an executor's AmDriverFinished ended the application (ask: %v); want it refused", err)
		default:
			if err == nil {
				t.Errorf("an executor's AmDriverFinished was answered; want it refused")
			}
		}
		fromDriver := driverEnv.RemoteRef(amEnv.Address(), cluster.AMEndpointName)
		if _, err := actor.AskAs[*messages.AmBoolResponse](ctx, fromDriver, end); err != nil {
			t.Fatalf("the driver's AmDriverFinished: %v", err)
		}
		select {
		case <-finished:
		default:
			t.Fatal("the driver's AmDriverFinished did not reach the launcher")
		}
	})
}
