package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/netty"
)

// The scheduler-backend scenarios measure package endpoints: a driver on a
// listening env and executors in this process, each executor with its own
// client-mode envs (its config fetcher and its executor env) connected over
// loopback TCP, as separate executor processes would be.

// emptyTaskName is the task of the empty-tasks scenario: it returns its
// 8-byte payload and counts its runs, so that the harness can check that
// every task ran exactly once and that every result came back to its
// partition.
const emptyTaskName = "sparkrpc.bench.empty"

// emptyTaskRuns counts the runs of emptyTaskName in this process.
var emptyTaskRuns atomic.Int64

// launchOrder checks that each executor runs the tasks of a job in the
// order of their partitions: the driver hands a job's tasks out in that
// order, one at a time to each one-core executor, so an executor that runs
// one after a later one got its LaunchTasks out of the order they were
// sent in.
var launchOrder struct {
	mu        sync.Mutex
	last      map[string][2]int64 // executor -> job, partition of its last task
	reordered atomic.Int64
}

// ranInOrder records that tc's task ran, counting it in
// launchOrder.reordered when it ran after a later partition of its job on
// its executor.
func ranInOrder(tc endpoints.TaskContext) {
	l := &launchOrder
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = make(map[string][2]int64)
	}
	if prev, ok := l.last[tc.ExecutorID]; ok && prev[0] == tc.JobID && prev[1] >= int64(tc.Partition) {
		l.reordered.Add(1)
	}
	l.last[tc.ExecutorID] = [2]int64{tc.JobID, int64(tc.Partition)}
}

// startAfresh forgets the last tasks of the executors of an earlier cluster:
// a new cluster numbers its jobs and executors from the start again, and
// its first task on executor "1" is not out of order after the last one of
// the cluster before.
func startAfresh() {
	l := &launchOrder
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.last)
}

// registerEmptyTask registers emptyTaskName in the process's task registry,
// once: the empty-tasks scenario calls it before it starts its cluster, so
// that importing the package registers nothing.
var registerEmptyTask = sync.OnceFunc(func() {
	endpoints.RegisterTask(emptyTaskName, func(_ context.Context, tc endpoints.TaskContext, payload []byte) ([]byte, error) {
		emptyTaskRuns.Add(1)
		ranInOrder(tc)
		return payload, nil
	})
})

// executorCores is the number of cores of each executor of the empty-tasks
// scenario (Spark's default spark.executor.cores on YARN).
const executorCores = 1

func schedulerUnavailable() string { return "" }

// clusterEnvs starts the driver's env and returns the executors' env factory.
func clusterEnvs(h *harness) (*actor.Env, endpoints.EnvFactory, error) {
	driverEnv, err := newNetworkedEnv(h, "bench-driver")
	if err != nil {
		return nil, nil, err
	}
	factory := func(name string, conf *actor.Conf) (*actor.Env, error) {
		env, err := netty.NewEnv(name, conf, netty.WithClientMode(), netty.WithLogger(h.log), netty.WithEnvOptions(h.metrics.envOptions()...))
		h.metrics.track(env)
		return env, err
	}
	return driverEnv, factory, nil
}

// startCluster starts a driver (with dopts) and n executors and waits
// until all are ready.
func startCluster(ctx context.Context, h *harness, n, cores int, dopts ...endpoints.DriverOption) (*endpoints.LocalCluster, func(), error) {
	driverEnv, factory, err := clusterEnvs(h)
	if err != nil {
		return nil, nil, err
	}
	c, err := endpoints.StartLocalCluster(ctx, driverEnv, endpoints.LocalClusterConfig{
		Executors:       n,
		Cores:           cores,
		NewEnv:          factory,
		Hostname:        "127.0.0.1",
		DriverOptions:   append([]endpoints.DriverOption{endpoints.WithLogger(h.log)}, dopts...),
		ExecutorOptions: []endpoints.ExecutorOption{endpoints.WithLogger(h.log)},
	})
	if err != nil {
		shutdownEnv(driverEnv)
		return nil, nil, err
	}
	return c, func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = c.Stop(stopCtx) // figures are taken; executors that do not stop cleanly only delay the next scenario
		shutdownEnv(driverEnv)
	}, nil
}

// executorRegistration starts p.Executors executors at once and measures the
// time until every one is registered and ready for tasks.
func executorRegistration(ctx context.Context, h *harness, p Params) (*Figures, error) {
	n := p.Executors
	storm := func() (sample, error) {
		start := time.Now()
		c, stop, err := startCluster(ctx, h, n, 1)
		elapsed := time.Since(start)
		if err != nil {
			return sample{}, err
		}
		defer stop()
		v := Verification{Sent: int64(n), Ordered: false}
		seen := make(map[string]int)
		for _, ex := range c.Driver.Executors() {
			seen[ex.ID]++
		}
		for i := 1; i <= n; i++ {
			switch seen[strconv.Itoa(i)] {
			case 0:
				v.Lost++
			case 1:
				v.Received++
			default:
				v.Received++
				v.Duplicates++
			}
			delete(seen, strconv.Itoa(i))
		}
		v.Unknown = int64(len(seen))
		v.OK = v.Lost == 0 && v.Duplicates == 0 && v.Unknown == 0 && v.Received == v.Sent
		return sample{
			messages: int64(n),
			elapsed:  elapsed,
			verified: v,
			extra: map[string]float64{
				"executors":                  float64(n),
				"seconds":                    elapsed.Seconds(),
				"seconds_per_1000_executors": elapsed.Seconds() * 1000 / float64(n),
			},
		}, nil
	}
	// A registration storm is one event: no warm-up, one measured run.
	return h.measureOnce(ctx, 0, storm)
}

// emptyTasks runs empty tasks on p.Executors executors: one job of Count
// tasks, or jobs of 1,000 tasks until Duration has passed.
func emptyTasks(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return emptyTasksWith(ctx, h, p)
}

// emptyTasksEventLog is emptyTasks with the driver writing its event log
// (the keys' defaults) into a temporary folder; the events it dropped are
// reported as the extra figure "eventlog_dropped".
func emptyTasksEventLog(ctx context.Context, h *harness, p Params) (*Figures, error) {
	dir, err := os.MkdirTemp("", "bench-eventlog")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	_, cfg, err := eventlog.ConfigFrom(actor.NewConf().Set(eventlog.KeyEnabled, "true"))
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	w := eventlog.NewWriter(cfg, eventlog.WithLogger(h.log))
	if err := w.Start("bench-empty-tasks", ""); err != nil {
		return nil, err
	}
	w.OnEvent(endpoints.ApplicationStart{Time: time.Now(), AppID: "bench-empty-tasks", AppName: ScenarioEmptyTasksEventLog})
	f, err := emptyTasksWith(ctx, h, p, endpoints.WithListener(w))
	cctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if cerr := w.Close(cctx); err == nil && cerr != nil {
		return nil, cerr
	}
	if f != nil {
		if f.Extra == nil {
			f.Extra = map[string]float64{}
		}
		f.Extra["eventlog_dropped"] = float64(w.Dropped())
	}
	return f, err
}

// emptyTasksNopListener is emptyTasks with a listener that does nothing:
// the driver builds and posts its events, which it does not without a
// listener.
func emptyTasksNopListener(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return emptyTasksWith(ctx, h, p, endpoints.WithListener(endpoints.ListenerFunc(func(endpoints.Event) {})))
}

// emptyTasksWith is emptyTasks with a driver of dopts.
func emptyTasksWith(ctx context.Context, h *harness, p Params, dopts ...endpoints.DriverOption) (*Figures, error) {
	registerEmptyTask()
	startAfresh()
	c, stop, err := startCluster(ctx, h, p.Executors, executorCores, dopts...)
	if err != nil {
		return nil, err
	}
	defer stop()
	runJob := func(ctx context.Context, tasks int, v *Verification) error {
		payloads := make([][]byte, tasks)
		for i := range payloads {
			payloads[i] = binary.BigEndian.AppendUint64(nil, uint64(i))
		}
		before, reordered := emptyTaskRuns.Load(), launchOrder.reordered.Load()
		results, err := c.Driver.RunJob(ctx, emptyTaskName, payloads)
		if err != nil {
			return err
		}
		v.Sent += int64(tasks)
		v.Ordered = true
		v.Reordered += launchOrder.reordered.Load() - reordered
		runs := emptyTaskRuns.Load() - before
		if runs > int64(tasks) {
			v.Duplicates += runs - int64(tasks)
		}
		for i, r := range results {
			if i < tasks && bytes.Equal(r, payloads[i]) {
				v.Received++
			} else {
				v.Unknown++
			}
		}
		if len(results) < tasks {
			v.Lost += int64(tasks - len(results))
		}
		return nil
	}
	run := func(ctx context.Context, b budget) (sample, error) {
		var v Verification
		start := time.Now()
		if b.count > 0 {
			if err := runJob(ctx, int(b.count), &v); err != nil {
				return sample{}, err
			}
		} else {
			for deadline := start.Add(b.duration); time.Now().Before(deadline); {
				if err := runJob(ctx, 1000, &v); err != nil {
					return sample{}, err
				}
			}
		}
		elapsed := time.Since(start)
		v.OK = v.Lost == 0 && v.Duplicates == 0 && v.Reordered == 0 && v.Unknown == 0 && v.Received == v.Sent
		return sample{messages: v.Sent, elapsed: elapsed, verified: v,
			extra: map[string]float64{"executors": float64(p.Executors), "cores_per_executor": executorCores}}, nil
	}
	return h.measure(ctx, 0, run)
}
