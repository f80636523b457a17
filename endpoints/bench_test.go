package endpoints_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

var benchNetworks = []func() network{memNetwork, tcpNetwork}

// BenchmarkRegisterExecutors measures how long N executors (in-process
// envs) take to go through the whole handshake: fetcher, RegisterExecutor,
// LaunchedExecutor. Target: 1,000 over loopback in at most 2 s.
func BenchmarkRegisterExecutors(b *testing.B) {
	for _, mk := range benchNetworks {
		for _, n := range []int{100, 1000} {
			for _, pre := range []bool{false, true} {
				name := fmt.Sprintf("%s/executors=%d", mk().name, n)
				if pre {
					// The envs are created before the clock starts: what
					// remains is the handshake itself.
					name += "/envs=precreated"
				}
				b.Run(name, func(b *testing.B) { benchRegister(b, mk, n, pre) })
			}
		}
	}
}

func benchRegister(b *testing.B, mk func() network, n int, precreate bool) {
	var total time.Duration
	for range b.N {
		b.StopTimer()
		nw := mk()
		env := nw.driverEnv(b, testConf())
		factory := nw.factory
		if precreate {
			pool := make(chan *actor.Env, 2*n)
			for range 2 * n {
				e, err := nw.factory("pooled", testConf())
				if err != nil {
					b.Fatal(err)
				}
				pool <- e
			}
			// A pooled env has the executor's conf only by reference: the
			// factory copies it in, which is all the executor needs.
			factory = func(_ string, conf *actor.Conf) (*actor.Env, error) {
				e := <-pool
				for k, v := range conf.All() {
					e.Conf().Set(k, v)
				}
				return e, nil
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		runtime.GC()
		b.StartTimer()
		start := time.Now()
		c, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{
			Executors: n, Cores: 1, NewEnv: factory})
		total += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		_ = env.Shutdown(ctx)
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/registration-round")
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "executors/s")
}

// BenchmarkEmptyTasks measures the scheduler's throughput: empty tasks
// through the driver and 4 executors (jobs of 1,000 tasks), with no
// listener, as the bench's empty-tasks scenario runs them. Target: at
// least 20,000 tasks/s.
func BenchmarkEmptyTasks(b *testing.B) {
	const jobSize = 1000
	for _, mk := range benchNetworks {
		for _, cores := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/executors=4/cores=%d", mk().name, cores), func(b *testing.B) {
				c := startBareCluster(b, mk(), testConf(), 4, cores)
				payloads := make([][]byte, jobSize)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for done := 0; done < b.N; done += jobSize {
					if _, err := c.Driver.RunJob(ctx, endpoints.NoopTaskName, payloads[:min(jobSize, b.N-done)]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
			})
		}
	}
}
