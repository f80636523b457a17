package bench

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The delivered TCP floor of the empty-tasks scenario: the raw TCP
// baseline's frames and round trips, with what the endpoint model of a
// scheduler cannot do without. Each frame is checked for its target
// endpoint and decoded into a new LaunchTask or StatusUpdate (vtprotobuf's
// generated methods, as sparkrpc's transport uses), and no message is
// handled on the reader that read it:
//
//   - the driver's readers, one per executor, hand status updates to one
//     driver goroutine (the driver endpoint, which handles one message at a
//     time), which launches the next task and writes it;
//   - an executor's reader hands a launch to the executor's goroutine (its
//     endpoint), which hands it to a task goroutine (a task must not hold up
//     the endpoint), which writes RUNNING and the final update in one write.
//
// Three hand-offs per task, writes from the goroutine that makes them, no
// envelope beyond the target's name, no flow control, no scheduler state.

// statusFrom is a status update and the index of the executor whose
// connection it came on.
type statusFrom struct {
	e int
	m *messages.StatusUpdate
}

// targetSuffix is the target field that ends every frame to target.
func targetSuffix(target string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, tcpTargetField, protowire.BytesType), target)
}

// tcpDeliveredEmptyTasks runs the empty-tasks workload on p.Executors raw
// TCP connections, delivering each message as an endpoint gets it.
func tcpDeliveredEmptyTasks(ctx context.Context, h *harness, p Params) (*Figures, error) {
	return tcpEmptyTasksWith(ctx, h, p, (*tcpTaskCluster).startDelivered)
}

// startDelivered starts the goroutines of the delivered floor: the driver,
// its readers, and each executor's reader, endpoint and task goroutine.
func (c *tcpTaskCluster) startDelivered() {
	driver := newHandoff[statusFrom]()
	var readers sync.WaitGroup
	readers.Add(len(c.writers))
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		driver.drain(func(s statusFrom) {
			j := c.job.Load()
			if j.status(s.m.TaskId, s.m.State, s.m.Result) {
				_ = c.launchNext(j, s.e) // a write fails only once the connections close, which also ends the readers and this loop
			}
		}, nil)
	}()
	go func() {
		defer c.wg.Done()
		readers.Wait()
		driver.close()
	}()
	for e := range c.writers {
		c.wg.Add(2)
		go func() {
			defer c.wg.Done()
			defer readers.Done()
			c.readStatuses(e, driver)
		}()
		go func() {
			defer c.wg.Done()
			c.executeDelivered(e)
		}()
	}
}

// readStatuses reads executor e's status updates on the driver's side and
// hands each to the driver, until the connection fails or closes.
func (c *tcpTaskCluster) readStatuses(e int, driver *handoff[statusFrom]) {
	suffix := targetSuffix(tcpDriverTarget)
	fr := newFrameReader(c.conns.clients[e])
	for {
		b, err := fr.read()
		if err != nil || !bytes.HasSuffix(b, suffix) {
			return
		}
		m := new(messages.StatusUpdate)
		if m.UnmarshalVT(b[:len(b)-len(suffix)]) != nil {
			return
		}
		driver.put(statusFrom{e: e, m: m})
	}
}

// executeDelivered runs executor e: its reader hands each launch to the
// executor's endpoint goroutine, which hands it to the task goroutine,
// which answers RUNNING and then FINISHED with the payload, flushing after
// each batch of tasks it takes.
func (c *tcpTaskCluster) executeDelivered(e int) {
	conn := c.conns.servers[e]
	fw := newFrameWriter(conn)
	exec := fmt.Sprint(e + 1)
	endpoint, tasks := newHandoff[*messages.LaunchTask](), newHandoff[*messages.LaunchTask]()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer tasks.close()
		endpoint.drain(tasks.put, nil)
	}()
	go func() {
		defer wg.Done()
		tasks.drain(func(t *messages.LaunchTask) {
			_ = fw.writeStatus(exec, t.TaskId, messages.TaskState_TASK_STATE_RUNNING, nil)
			_ = fw.writeStatus(exec, t.TaskId, messages.TaskState_TASK_STATE_FINISHED, t.Payload)
		}, fw.w.Flush)
	}()
	defer func() {
		endpoint.close()
		wg.Wait()
	}()
	suffix := targetSuffix(tcpExecutorTarget)
	fr := newFrameReader(conn)
	for {
		b, err := fr.read()
		if err != nil || !bytes.HasSuffix(b, suffix) {
			return
		}
		m := new(messages.LaunchTask)
		if m.UnmarshalVT(b[:len(b)-len(suffix)]) != nil {
			return
		}
		endpoint.put(m)
	}
}
