package endpoints_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
)

// testTimeout bounds every wait of a test.
const testTimeout = 20 * time.Second

// network makes the envs of a test: the driver's (listening) and the
// executors' (client mode).
type network struct {
	name      string
	driverEnv func(t testing.TB, conf *actor.Conf) *actor.Env
	factory   endpoints.EnvFactory
}

func memNetwork() network {
	n := actor.NewMemNetwork()
	return network{
		name: "mem",
		driverEnv: func(t testing.TB, conf *actor.Conf) *actor.Env {
			env, err := actor.NewEnv("sparkDriver", conf, actor.WithTransport(n.Transport("driver-host", 7077)))
			if err != nil {
				t.Fatal(err)
			}
			return env
		},
		factory: endpoints.MemEnvFactory(n),
	}
}

func tcpNetwork() network {
	return network{
		name: "tcp",
		driverEnv: func(t testing.TB, conf *actor.Conf) *actor.Env {
			env, err := netty.NewEnv("sparkDriver", conf, netty.WithBindHost("127.0.0.1"), netty.WithPort(0))
			if err != nil {
				t.Fatal(err)
			}
			return env
		},
		factory: func(name string, conf *actor.Conf) (*actor.Env, error) {
			return netty.NewEnv(name, conf, netty.WithClientMode())
		},
	}
}

// forEachNetwork runs fn over the in-memory network and over TCP.
func forEachNetwork(t *testing.T, fn func(t *testing.T, nw network)) {
	for _, mk := range []func() network{memNetwork, tcpNetwork} {
		nw := mk()
		t.Run(nw.name, func(t *testing.T) {
			t.Parallel()
			fn(t, nw)
		})
	}
}

// testConf is the driver's configuration of the tests: long ask and lookup
// timeouts, so that short spark.network.timeout values only drive heartbeats.
func testConf(kv ...string) *actor.Conf {
	c := actor.NewConf()
	c.Set(actor.KeyAskTimeout, "30s").Set(actor.KeyLookupTimeout, "30s")
	for i := 0; i+1 < len(kv); i += 2 {
		c.Set(kv[i], kv[i+1])
	}
	return c
}

// envRecorder wraps an EnvFactory and keeps the executors' envs by id.
type envRecorder struct {
	inner endpoints.EnvFactory
	mu    sync.Mutex
	envs  map[string]*actor.Env
}

func recordEnvs(f endpoints.EnvFactory) *envRecorder {
	return &envRecorder{inner: f, envs: make(map[string]*actor.Env)}
}

func (r *envRecorder) factory(name string, conf *actor.Conf) (*actor.Env, error) {
	env, err := r.inner(name, conf)
	if err == nil {
		if id, ok := conf.Lookup("spark.executor.id"); ok {
			r.mu.Lock()
			r.envs[id] = env
			r.mu.Unlock()
		}
	}
	return env, err
}

func (r *envRecorder) env(id string) *actor.Env {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.envs[id]
}

// cluster is a test's driver and executors.
type cluster struct {
	*endpoints.LocalCluster
	env  *actor.Env
	envs *envRecorder
	rec  *recorder
}

func startCluster(t testing.TB, nw network, conf *actor.Conf, executors, cores int, dopts ...endpoints.DriverOption) *cluster {
	t.Helper()
	env := nw.driverEnv(t, conf)
	rec := newRecorder()
	envs := recordEnvs(nw.factory)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	lc, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{
		Executors:     executors,
		Cores:         cores,
		NewEnv:        envs.factory,
		DriverOptions: append([]endpoints.DriverOption{endpoints.WithListener(rec)}, dopts...),
	})
	if err != nil {
		_ = env.Shutdown(ctx)
		t.Fatalf("start cluster: %v", err)
	}
	c := &cluster{LocalCluster: lc, env: env, envs: envs, rec: rec}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = lc.Stop(ctx)
		_ = env.Shutdown(ctx)
	})
	return c
}

// startBareCluster starts a driver and executors with nothing beside them
// (no listener, no recorded envs), as an application runs them: what the
// benchmarks and the allocation bounds measure.
func startBareCluster(t testing.TB, nw network, conf *actor.Conf, executors, cores int) *endpoints.LocalCluster {
	t.Helper()
	env := nw.driverEnv(t, conf)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	lc, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{Executors: executors, Cores: cores, NewEnv: nw.factory})
	if err != nil {
		_ = env.Shutdown(ctx)
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := lc.Stop(ctx); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
		if err := env.Shutdown(ctx); err != nil {
			t.Errorf("shut down the driver's env: %v", err)
		}
	})
	return lc
}

// recorder is a listener that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []endpoints.Event
	wake   chan struct{}
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{})} }

func (r *recorder) OnEvent(ev endpoints.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]endpoints.Event, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]endpoints.Event(nil), r.events...), r.wake
}

// waitFor waits until pred holds for the events so far and returns them.
func (r *recorder) waitFor(t testing.TB, what string, pred func([]endpoints.Event) bool) []endpoints.Event {
	t.Helper()
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	for {
		evs, wake := r.snapshot()
		if pred(evs) {
			return evs
		}
		select {
		case <-wake:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s; events: %v", what, summarize(evs))
		}
	}
}

func summarize(evs []endpoints.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n  %T %+v", ev, ev)
	}
	return b.String()
}

func countEvents[E endpoints.Event](evs []endpoints.Event, pred func(E) bool) int {
	n := 0
	for _, ev := range evs {
		if e, ok := ev.(E); ok && (pred == nil || pred(e)) {
			n++
		}
	}
	return n
}

// gates let blocking test tasks wait until a test releases them.
var gates testutil.Gates

// gatedPayloads returns n payloads of test.gated that wait for the gate
// under key.

func gatedPayloads(key string, n int) [][]byte {
	ps := make([][]byte, n)
	for i := range ps {
		ps[i] = []byte(fmt.Sprintf("%s|%d", key, i))
	}
	return ps
}

func init() {
	// test.gated waits for its gate (the payload up to '|'), or until it is
	// killed, and returns its payload.
	endpoints.RegisterTask("test.gated", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		key, _, _ := strings.Cut(string(p), "|")
		if err := gates.Wait(ctx, key); err != nil {
			return nil, err
		}
		return p, nil
	})
	// test.failOrStall with the payload "fail|KEY" fails once the task
	// that waits for the gate KEY has reached it; any other payload is a
	// gate's key, which it waits for whatever its context says: an attempt
	// that outlives a kill.
	endpoints.RegisterTask("test.failOrStall", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		if key, ok := strings.CutPrefix(string(p), "fail|"); ok {
			arrived, err := gates.Arrived(key, 1)
			if err != nil {
				return nil, err
			}
			select {
			case <-arrived:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			return nil, errors.New("failed once the other task stalled")
		}
		if err := gates.Wait(context.Background(), string(p)); err != nil {
			return nil, err
		}
		return p, nil
	})
	// test.panic always panics with its payload.
	endpoints.RegisterTask("test.panic", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		panic("boom: " + string(p))
	})
	// test.flaky panics in its first two attempts.
	endpoints.RegisterTask("test.flaky", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		if tc.Attempt < 2 {
			panic(fmt.Sprintf("flaky attempt %d", tc.Attempt))
		}
		return append([]byte("ok:"), p...), nil
	})
	// test.executor returns the id of the executor that ran it.
	endpoints.RegisterTask("test.executor", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		return []byte(tc.ExecutorID), nil
	})
	// test.repeat returns its payload's first byte repeated as many times
	// as the rest of its payload says (decimal).
	endpoints.RegisterTask("test.repeat", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		n, err := strconv.Atoi(string(p[1:]))
		if err != nil {
			return nil, err
		}
		return bytes.Repeat(p[:1], n), nil
	})
}

// fakeExecutor speaks the executor's side of the protocol by hand, so that
// tests can look at each step.
type fakeExecutor struct {
	env      *actor.Env
	ref      *actor.Ref
	driver   *actor.Ref
	launches chan *messages.LaunchTask
	stops    chan struct{}
}

func newFakeExecutor(t *testing.T, nw network, driverURL string) *fakeExecutor {
	t.Helper()
	env, err := nw.factory("fakeExecutor", testConf())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = env.Shutdown(ctx)
	})
	f := &fakeExecutor{env: env, launches: make(chan *messages.LaunchTask, 1024), stops: make(chan struct{}, 16)}
	f.ref, err = env.RegisterEndpoint(endpoints.ExecutorEndpointName, actor.ReceiveFunc(func(_ *actor.Context, msg proto.Message) error {
		switch m := msg.(type) {
		case *messages.LaunchTask:
			f.launches <- m
		case *messages.StopExecutor:
			f.stops <- struct{}{}
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if f.driver, err = env.SetupEndpointRefByURI(ctx, driverURL); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeExecutor) register(id, host string, cores int) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := actor.AskAs[*messages.BoolReply](ctx, f.driver, &messages.RegisterExecutor{
		ExecutorId: id, ExecutorRef: f.ref.Proto(), Hostname: host, Cores: int32(cores)})
	return err
}

func (f *fakeExecutor) nextLaunch(t *testing.T) *messages.LaunchTask {
	t.Helper()
	return testutil.Recv(t, f.launches, testTimeout, "a LaunchTask")
}

func executor(d *endpoints.Driver, id string) (endpoints.ExecutorInfo, bool) {
	for _, ex := range d.Executors() {
		if ex.ID == id {
			return ex, true
		}
	}
	return endpoints.ExecutorInfo{}, false
}

func runJob(t *testing.T, d *endpoints.Driver, task string, payloads [][]byte) ([][]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return d.RunJob(ctx, task, payloads)
}

func startClusterNoCleanup(t testing.TB, nw network, env *actor.Env) *endpoints.LocalCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	lc, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{Executors: 2, Cores: 2, NewEnv: nw.factory})
	if err != nil {
		t.Fatal(err)
	}
	return lc
}
