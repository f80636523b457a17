// The simulated application: a driver, executors that a small cluster
// manager replaces when they exit, and jobs of the simulator's task.

package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

// app is what the world runs: the production driver and executors on the
// simulated network, unchanged.
type app struct {
	w         *World
	driverEnv *actor.Env
	driver    *endpoints.Driver
	driverID  string // the driver's node identity

	wg sync.WaitGroup // executors' goroutines, jobs' goroutines, the stop

	mu        sync.Mutex
	executors map[string]*executor
	byNode    map[string]*executor
	started   int
	stopping  bool
	removedAt map[string]time.Duration // when the driver removed each executor
	removedIn map[string]uint64        // the idle point at which that was seen
	added     int
	jobs      []*job
	running   map[int64]*taskRun // by task id
	// launched are the task ids whose LaunchTask left the driver, with their
	// job and partition; reported, those whose RUNNING reached the driver
	// (see lostRunning).
	launched map[int64]taskOf
	reported map[int64]bool

	yarn   *yarnCluster // the YARN-shaped cluster, for the seeds that run one
	appErr error        // the application ended before its jobs (the cluster ended it)
}

// executor is one executor process.
type executor struct {
	id, host string
	envs     []*actor.Env
	nodes    []*node
	cancel   context.CancelFunc
	exited   bool
	killed   bool
	holdEnd  time.Duration // when its last pause, partition or slowness ended
	held     int           // pauses, partitions and slowness in force
	paused   bool
	waiters  map[int64]chan struct{} // the paused tasks by id, each resumed in a step of its own
	hosts    []*tcpHost              // a netty seed's: its envs' and its chatty client's hosts
	made     int                     // envs made so far

	container string // the executor's container, on the YARN-shaped cluster
}

// job is one RunJob of the application.
type job struct {
	idx       int
	parts     int
	cancel    context.CancelCauseFunc
	cancelled bool
	ended     bool
	endAt     time.Duration
	res       [][]byte
	err       error
	injected  map[int]int // injected failures by partition
	// lostRunning counts, by partition, the attempts lost with their
	// executor after their RUNNING reached the driver: Spark's
	// ExecutorLostFailure, which may count as a failure of the partition.
	lostRunning map[int]int
}

// taskOf is the job and partition of a task id.
type taskOf struct{ job, part int }

// taskRun is one execution of the simulator's task function.
type taskRun struct {
	job, part, attempt int
	tid                int64
	exec               string
	startAt            time.Duration
}

// errJobCancelled is the cause the simulator cancels jobs with.
var errJobCancelled = errors.New("sim: job cancelled by the simulator")

func newApp(w *World) *app {
	return &app{w: w, executors: make(map[string]*executor), byNode: make(map[string]*executor),
		removedAt: make(map[string]time.Duration), removedIn: make(map[string]uint64), running: make(map[int64]*taskRun),
		launched: make(map[int64]taskOf), reported: make(map[int64]bool)}
}

// start creates the driver and the first executors, and schedules the
// jobs.
func (a *app) start() error {
	w := a.w
	tr, id := a.driverTransport()
	env, err := actor.NewEnv("sparkDriver", w.cfg.conf(), actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
	if err != nil {
		return err
	}
	a.driverEnv, a.driverID = env, id
	opts := []endpoints.DriverOption{endpoints.WithListener(endpoints.ListenerFunc(a.onEvent)), endpoints.WithLogger(zerolog.Nop()),
		endpoints.WithRand(rand.New(rand.NewPCG(w.seed, 0x5eed))), endpoints.WithLockRelease(w.driverLockReleased)}
	if w.cfg.yarn != nil {
		a.yarn = newYarnCluster(a)
		opts = append(opts, endpoints.WithClusterManager(&sequencedCM{w: w, inner: a.yarn.sched}))
	}
	d, err := endpoints.NewDriver(env, opts...)
	if err != nil {
		return err
	}
	a.driver = d
	if err := a.registerSeq(); err != nil {
		return err
	}
	if a.yarn != nil {
		if err := a.yarn.start(); err != nil {
			return err
		}
	} else {
		for range w.cfg.executors {
			a.startExecutor()
		}
	}
	for i, jc := range w.cfg.jobs {
		j := &job{idx: i, parts: jc.parts, injected: make(map[int]int), lostRunning: make(map[int]int)}
		a.jobs = append(a.jobs, j)
		w.at(jc.submit, fmt.Sprintf("submit job %d (%d partitions)", i, jc.parts), func() { a.submit(j) })
		switch {
		case jc.race:
			w.at(jc.cancel, fmt.Sprintf("the next status update will race the cancel of job %d", i), func() {
				w.armRace(fmt.Sprintf("cancel job %d", i), func() { a.cancelJob(j) })
			})
		case jc.cancel > 0:
			w.at(jc.cancel, fmt.Sprintf("cancel job %d", i), func() { a.cancelJob(j) })
		}
	}
	return nil
}

// startExecutor starts one more executor process.
func (a *app) startExecutor() {
	w := a.w
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		return
	}
	a.started++
	n := a.started
	id := strconv.Itoa(n)
	ex := &executor{id: id, host: "host-" + strconv.Itoa(n%w.cfg.hosts)}
	a.executors[id] = ex
	a.mu.Unlock()
	w.trace.add("start executor %s on %s", id, ex.host)
	cfg := endpoints.ExecutorConfig{DriverURL: a.driver.URL(), ExecutorID: id, Hostname: ex.host, Cores: w.cfg.cores}
	a.runExecutor(ex, cfg, nil, fmt.Sprintf("executor %6d", n), func(err error) { a.exited(ex, err) })
}

// runExecutor runs executor ex with cfg and opts on a goroutine of its
// own, its envs on the simulated network; exit runs on the loop once
// RunExecutor has returned, in the order of key among what ends at once.
func (a *app) runExecutor(ex *executor, cfg endpoints.ExecutorConfig, opts []endpoints.ExecutorOption, key string, exit func(error)) {
	w := a.w
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	ex.cancel = cancel
	a.mu.Unlock()
	id := ex.id
	factory := func(name string, conf *actor.Conf) (*actor.Env, error) {
		a.mu.Lock()
		tr := a.executorTransport(ex)
		killed := ex.killed
		a.mu.Unlock()
		if killed {
			return nil, errors.New("sim: the executor's process was killed")
		}
		env, err := actor.NewEnv(name, conf, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
		if err == nil {
			a.mu.Lock()
			ex.envs = append(ex.envs, env)
			a.mu.Unlock()
		}
		return env, err
	}
	opts = append(opts, endpoints.WithEnvFactory(factory), endpoints.WithLogger(zerolog.Nop()))
	if w.tcp != nil {
		// Netty seeds do not run the YARN-shaped cluster: every executor
		// is one the simulator started, its id its number.
		n, _ := strconv.Atoi(id)
		a.startChatter(ctx, ex, n)
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		err := endpoints.RunExecutor(ctx, cfg, opts...)
		w.request(key, func() { exit(err) })
	}()
}

// exited records an executor's end and, while the application runs,
// starts another in its place after a while, as a cluster manager would.
func (a *app) exited(ex *executor, err error) {
	w := a.w
	w.trace.add("executor %s exited: %v", ex.id, err)
	a.mu.Lock()
	ex.exited = true
	replace := !a.stopping && a.started < w.cfg.executors+maxReplacements && a.yarn == nil
	a.mu.Unlock()
	ex.cancel()
	if replace {
		w.at(w.jitter(500*time.Millisecond, 3*time.Second), "", a.startExecutor)
	}
}

// maxReplacements bounds how many executors replace lost ones.
const maxReplacements = 24

// submit runs job j's RunJob on a goroutine of its own.
func (a *app) submit(j *job) {
	ctx, cancel := context.WithCancelCause(context.Background())
	a.mu.Lock()
	j.cancel = cancel
	if a.appErr != nil {
		cancel(a.appErr) // the application has ended: the job fails at once
	}
	a.mu.Unlock()
	payloads := make([][]byte, j.parts)
	for p := range payloads {
		payloads[p] = taskPayload(a.w.seed, j.idx, p)
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		res, err := a.driver.RunJob(ctx, TaskName, payloads)
		cancel(nil)
		a.w.request(fmt.Sprintf("job %6d", j.idx), func() { a.jobEnded(j, res, err) })
	}()
}

func (a *app) cancelJob(j *job) {
	a.mu.Lock()
	ended := j.ended || j.cancel == nil
	if !ended {
		j.cancelled = true
	}
	a.mu.Unlock()
	if !ended {
		j.cancel(errJobCancelled)
	}
}

// appFailed records that the cluster ended the application, and fails its
// jobs with err, one a step, as a driver whose application ended does;
// the jobs submitted later fail at once. It runs on the loop.
func (a *app) appFailed(err error) {
	a.mu.Lock()
	if a.appErr == nil {
		a.appErr = err
	}
	var running []*job
	for _, j := range a.jobs {
		if !j.ended && j.cancel != nil {
			running = append(running, j)
		}
	}
	a.mu.Unlock()
	a.w.trace.add("the application ended: %v", err)
	for _, j := range running {
		a.w.at(a.w.jitter(time.Microsecond, 50*time.Microsecond), "", func() { j.cancel(err) })
	}
}

// jobEnded checks a job's outcome; once every job ended, the application
// stops.
func (a *app) jobEnded(j *job, res [][]byte, err error) {
	w := a.w
	a.mu.Lock()
	j.ended, j.endAt, j.res, j.err = true, w.now(), res, err
	all := true
	for _, o := range a.jobs {
		all = all && o.ended
	}
	a.mu.Unlock()
	w.trace.add("job %d ended: %v", j.idx, err)
	a.checkJob(j)
	if all {
		a.stop()
	}
}

// stop stops the application as a program does: the driver (which stops
// the executors), then the driver's env.
func (a *app) stop() {
	w := a.w
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
	a.checkMetrics()
	w.trace.add("stop the application")
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := a.driver.Stop(ctx); err != nil {
			w.fail("the driver did not stop: %v", err)
		}
		if a.yarn != nil {
			a.yarn.finish(ctx)
		}
		a.wg.Wait()
		if a.yarn != nil {
			a.yarn.shutdown(ctx)
		}
		if err := a.driverEnv.Shutdown(ctx); err != nil {
			w.fail("the driver's env did not shut down: %v", err)
		}
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
		w.wake()
	}()
}

// teardown ends what still runs after a hang, so that the bubble can end.
func (a *app) teardown() {
	a.mu.Lock()
	a.stopping = true
	var envs []*actor.Env
	for _, ex := range a.executors {
		ex.cancel()
		envs = append(envs, ex.envs...)
	}
	jobs := append([]*job(nil), a.jobs...)
	a.mu.Unlock()
	for _, j := range jobs {
		if j.cancel != nil {
			j.cancel(errors.New("sim: teardown"))
		}
	}
	for _, e := range envs {
		_ = e.Close()
	}
	if a.yarn != nil {
		a.yarn.teardown()
	}
	if a.driver != nil {
		_ = a.driver.Stop(context.Background())
	}
	if a.driverEnv != nil {
		_ = a.driverEnv.Close()
	}
}

// onEvent is the driver's listener.
func (a *app) onEvent(ev endpoints.Event) {
	switch e := ev.(type) {
	case endpoints.ExecutorRemoved:
		a.mu.Lock()
		if _, seen := a.removedAt[e.ExecutorID]; !seen {
			a.removedAt[e.ExecutorID] = e.Time.Sub(a.w.start)
			a.removedIn[e.ExecutorID] = ^uint64(0) // set at the next idle point
		}
		a.mu.Unlock()
	case endpoints.ExecutorAdded:
		a.mu.Lock()
		a.added++
		a.mu.Unlock()
	case endpoints.TaskEnd:
		a.mu.Lock()
		if t, ok := a.launched[e.TaskID]; ok && e.State == messages.TaskState_TASK_STATE_LOST && a.reported[e.TaskID] {
			a.jobs[t.job].lostRunning[t.part]++
		}
		delete(a.launched, e.TaskID)
		delete(a.reported, e.TaskID)
		a.mu.Unlock()
	}
}

// describeHang says what the application waits for.
func (a *app) describeHang() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, j := range a.jobs {
		if !j.ended {
			fmt.Fprintf(&b, "job %d not ended; ", j.idx)
		}
	}
	ids := make([]string, 0, len(a.executors))
	for id, ex := range a.executors {
		if !ex.exited {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	fmt.Fprintf(&b, "executors still running: %v; tasks running: %d", ids, len(a.running))
	return b.String()
}
