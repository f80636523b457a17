package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The raw TCP baseline of the empty-tasks scenario: the ceiling of a
// protocol that runs one task per round trip on each one-core executor.
// One loopback connection per executor; the "driver" writes a
// LaunchTask-sized frame, the executor answers with two StatusUpdate-sized
// frames (RUNNING, then FINISHED with the task's payload as its result) in
// one write, and the driver launches the next task of the job on that
// executor as soon as the final frame arrives. No scheduler, no endpoints,
// no goroutine hops: one goroutine per connection on each side, frames
// encoded and read in place with protowire. Tasks are counted as the
// sparkrpc side counts them: jobs of 1,000 tasks until the duration has
// passed, or one job of the measured count.

// The frames carry the fields of messages.LaunchTask and
// messages.StatusUpdate, in their wire format, and the target endpoint's
// name in field tcpTargetField, as an envelope would: 54 to 56 bytes for a
// launch, 37 to 38 and 47 to 48 for the two status updates, with the
// length prefix.
const (
	tcpTargetField    = 15
	tcpExecutorTarget = "Executor"
	tcpDriverTarget   = "CoarseGrainedScheduler"
)

// writeLaunch writes a LaunchTask frame of task id with its payload.
func (fw *frameWriter) writeLaunch(id int64, partition int32, payload []byte) error {
	b := fw.begin()
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(partition))
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, emptyTaskName)
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b = protowire.AppendBytes(b, payload)
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, 1) // job id
	b = protowire.AppendTag(b, 7, protowire.VarintType)
	b = protowire.AppendVarint(b, executorCores)
	b = protowire.AppendTag(b, tcpTargetField, protowire.BytesType)
	b = protowire.AppendString(b, tcpExecutorTarget)
	return fw.flushFrame(b)
}

// writeStatus writes a StatusUpdate frame of task id.
func (fw *frameWriter) writeStatus(exec string, id int64, state messages.TaskState, result []byte) error {
	b := fw.begin()
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, exec)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(state))
	if len(result) > 0 {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, result)
	}
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, executorCores)
	b = protowire.AppendTag(b, tcpTargetField, protowire.BytesType)
	b = protowire.AppendString(b, tcpDriverTarget)
	return fw.flushFrame(b)
}

// decodeTaskFrame reads, in place, the task id (field idField), the state
// (field 3 of a StatusUpdate) and the bytes of field bytesField of a
// LaunchTask (1, 5: its payload) or StatusUpdate (2, 4: its result) frame.
func decodeTaskFrame(b []byte, idField, bytesField protowire.Number) (id int64, state messages.TaskState, data []byte, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, nil, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == idField && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			id, b = int64(v), b[n:]
		case num == 3 && idField == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			state, b = messages.TaskState(v), b[n:]
		case num == bytesField && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			data, b = v, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return 0, 0, nil, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return id, state, data, nil
}

// tcpTaskJob is one job of the raw TCP baseline. Task i has id i+1 and
// the 8-byte payload i; its states and its result are written only by one
// goroutine (the reader of the connection it ran on, or in the delivered
// baseline the driver's goroutine), and read once done is closed (the
// atomic completed orders them).
type tcpTaskJob struct {
	payloads  [][]byte
	states    []messages.TaskState // the last state each task reported
	next      atomic.Int64         // the next task to launch
	completed atomic.Int64         // tasks whose final state arrived
	done      chan struct{}        // closed when every task completed
	// Verification failures beside a missing task: a status of an unknown
	// task, a result that is not the task's payload (wrong), a FINISHED
	// without a RUNNING before it (reordered), a second FINISHED
	// (duplicate).
	unknown, wrong, reordered, duplicates atomic.Int64
}

func newTCPTaskJob(tasks int) *tcpTaskJob {
	j := &tcpTaskJob{payloads: make([][]byte, tasks), states: make([]messages.TaskState, tasks), done: make(chan struct{})}
	for i := range j.payloads {
		j.payloads[i] = binary.BigEndian.AppendUint64(nil, uint64(i))
	}
	return j
}

// status applies a status frame of task id; it returns whether the task
// ended, and so freed its executor's core.
func (j *tcpTaskJob) status(id int64, state messages.TaskState, result []byte) bool {
	i := id - 1
	if i < 0 || i >= int64(len(j.payloads)) {
		j.unknown.Add(1)
		return false
	}
	prev := j.states[i]
	switch state {
	case messages.TaskState_TASK_STATE_RUNNING:
		if prev != messages.TaskState_TASK_STATE_LAUNCHING {
			j.reordered.Add(1)
		}
		j.states[i] = state
		return false
	case messages.TaskState_TASK_STATE_FINISHED:
		switch {
		case prev == messages.TaskState_TASK_STATE_FINISHED:
			j.duplicates.Add(1)
			return false
		case prev != messages.TaskState_TASK_STATE_RUNNING:
			j.reordered.Add(1)
		}
		if string(result) != string(j.payloads[i]) {
			j.wrong.Add(1)
		}
		j.states[i] = state
		if j.completed.Add(1) == int64(len(j.payloads)) {
			close(j.done)
		}
		return true
	default:
		j.unknown.Add(1)
		return false
	}
}

// verification returns the job's verification once it is done.
func (j *tcpTaskJob) verification() Verification {
	v := Verification{
		Sent:       int64(len(j.payloads)),
		Received:   j.completed.Load() - j.wrong.Load(),
		Unknown:    j.unknown.Load() + j.wrong.Load(),
		Reordered:  j.reordered.Load(),
		Duplicates: j.duplicates.Load(),
	}
	v.OK = v.Received == v.Sent && v.Unknown == 0 && v.Reordered == 0 && v.Duplicates == 0
	return v
}

// tcpTaskCluster is the driver's side of every executor's connection, the
// executors' goroutines, and the job that runs.
type tcpTaskCluster struct {
	conns   *tcpConns
	mu      []sync.Mutex // one per executor: the first launch of a job and the driver's reader (or goroutine) share its writer
	writers []*frameWriter
	job     atomic.Pointer[tcpTaskJob]
	wg      sync.WaitGroup
}

// launchNext launches the job's next task, if any, on executor e.
func (c *tcpTaskCluster) launchNext(j *tcpTaskJob, e int) error {
	i := j.next.Add(1) - 1
	if i >= int64(len(j.payloads)) {
		return nil
	}
	c.mu[e].Lock()
	defer c.mu[e].Unlock()
	if err := c.writers[e].writeLaunch(i+1, int32(i), j.payloads[i]); err != nil {
		return err
	}
	return c.writers[e].w.Flush()
}

// drive reads executor e's status updates on the driver's side and
// launches the next task on each final one.
func (c *tcpTaskCluster) drive(e int) {
	defer c.wg.Done()
	fr := newFrameReader(c.conns.clients[e])
	for {
		b, err := fr.read()
		if err != nil {
			return
		}
		id, state, result, err := decodeTaskFrame(b, 2, 4)
		if err != nil {
			return
		}
		j := c.job.Load()
		if j.status(id, state, result) && c.launchNext(j, e) != nil {
			return
		}
	}
}

// execute runs executor e: each launched task answers RUNNING and then
// FINISHED with its payload, both in one write.
func (c *tcpTaskCluster) execute(e int) {
	defer c.wg.Done()
	conn := c.conns.servers[e]
	fr, fw := newFrameReader(conn), newFrameWriter(conn)
	exec := fmt.Sprint(e + 1)
	for {
		b, err := fr.read()
		if err != nil {
			return
		}
		id, _, payload, err := decodeTaskFrame(b, 1, 5)
		if err != nil {
			return
		}
		if fw.writeStatus(exec, id, messages.TaskState_TASK_STATE_RUNNING, nil) != nil ||
			fw.writeStatus(exec, id, messages.TaskState_TASK_STATE_FINISHED, payload) != nil {
			return
		}
		if fr.r.Buffered() == 0 && fw.w.Flush() != nil {
			return
		}
	}
}

// runJob runs a job of n tasks and adds its verification to v.
func (c *tcpTaskCluster) runJob(ctx context.Context, n int, stall time.Duration, v *Verification) error {
	j := newTCPTaskJob(n)
	c.job.Store(j)
	for e := range c.writers {
		if err := c.launchNext(j, e); err != nil {
			return err
		}
	}
	ticker := time.NewTicker(stall)
	defer ticker.Stop()
	last := int64(-1)
	for done := false; !done; {
		select {
		case <-j.done:
			done = true
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			now := j.completed.Load()
			if now == last {
				return fmt.Errorf("%w: %d of %d raw TCP tasks ended, none for %v", ErrStalled, now, n, stall)
			}
			last = now
		}
	}
	jv := j.verification()
	v.Sent += jv.Sent
	v.Received += jv.Received
	v.Unknown += jv.Unknown
	v.Reordered += jv.Reordered
	v.Duplicates += jv.Duplicates
	return nil
}

// tcpEmptyTasks runs the empty-tasks workload on p.Executors raw TCP
// connections.
func tcpEmptyTasks(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return tcpEmptyTasksWith(ctx, h, p, (*tcpTaskCluster).startInline)
}

// startInline starts the goroutines of the raw TCP baseline: a driver's
// reader and an executor on each connection, which answer in place.
func (c *tcpTaskCluster) startInline() {
	for e := range c.writers {
		c.wg.Add(2)
		go c.drive(e)
		go c.execute(e)
	}
}

// tcpEmptyTasksWith runs the empty-tasks workload on p.Executors raw TCP
// connections, whose goroutines start starts.
func tcpEmptyTasksWith(ctx context.Context, h *harness, p Params, start func(*tcpTaskCluster)) (*Figures, error) {
	conns, err := newTCPConns(ctx, nil, p.Executors)
	if err != nil {
		return nil, err
	}
	c := &tcpTaskCluster{conns: conns, mu: make([]sync.Mutex, p.Executors), writers: make([]*frameWriter, p.Executors)}
	c.job.Store(newTCPTaskJob(0))
	for e := range c.writers {
		c.writers[e] = newFrameWriter(conns.clients[e])
	}
	start(c)
	defer func() {
		conns.close()
		c.wg.Wait()
	}()
	run := func(ctx context.Context, b budget) (sample, error) {
		v := Verification{Ordered: true}
		start := time.Now()
		if b.count > 0 {
			if err := c.runJob(ctx, int(b.count), h.cfg.StallTimeout, &v); err != nil {
				return sample{}, err
			}
		} else {
			for deadline := start.Add(b.duration); time.Now().Before(deadline); {
				if err := c.runJob(ctx, 1000, h.cfg.StallTimeout, &v); err != nil {
					return sample{}, err
				}
			}
		}
		elapsed := time.Since(start)
		v.OK = v.Received == v.Sent && v.Unknown == 0 && v.Reordered == 0 && v.Duplicates == 0
		return sample{messages: v.Sent, elapsed: elapsed, verified: v,
			extra: map[string]float64{"executors": float64(p.Executors), "cores_per_executor": executorCores}}, nil
	}
	return h.measure(ctx, 0, run)
}
