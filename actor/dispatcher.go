// The shared message loop: a fixed pool of workers that run endpoints' mailboxes in turn.

package actor

import (
	"sync"
	"sync/atomic"
)

// poolDispatcher is a protoactor Dispatcher that runs scheduled mailboxes on
// a fixed number of goroutines: Spark's shared message loop
// (spark.rpc.netty.dispatcher.numThreads) and, with one goroutine, the
// dedicated loop of an isolated endpoint. Its queue is unbounded, so Schedule
// never blocks (a handler that sends to an idle endpoint schedules it from a
// worker goroutine).
type poolDispatcher struct {
	throughput int
	mu         sync.Mutex
	cond       sync.Cond
	queue      []func()
	head       int
	idle       int
	closed     bool
	wg         sync.WaitGroup
	waiting    atomic.Int64 // queued functions no worker has taken yet
	// owner, when set, counts the workers too: the env's, which waits for
	// the loops of its endpoints when it shuts down.
	owner *sync.WaitGroup
}

func newPoolDispatcher(workers, throughput int) *poolDispatcher {
	return newOwnedDispatcher(workers, throughput, nil)
}

// newOwnedDispatcher is newPoolDispatcher whose workers owner counts as
// well, when it is not nil.
func newOwnedDispatcher(workers, throughput int, owner *sync.WaitGroup) *poolDispatcher {
	d := &poolDispatcher{throughput: throughput, owner: owner}
	d.cond.L = &d.mu
	d.wg.Add(workers)
	if owner != nil {
		owner.Add(workers)
	}
	for range workers {
		go d.work()
	}
	return d
}

// Schedule queues fn for a worker. After close it runs fn on a goroutine of
// its own, so that mail posted to a stopped endpoint is still accounted for.
func (d *poolDispatcher) Schedule(fn func()) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		go fn()
		return
	}
	d.queue = append(d.queue, fn)
	d.waiting.Add(1)
	if d.idle > 0 {
		d.cond.Signal()
	}
	d.mu.Unlock()
}

// Throughput is how many messages a mailbox processes before yielding.
func (d *poolDispatcher) Throughput() int { return d.throughput }

// contended reports whether a scheduled mailbox waits for a worker: a
// mailbox that used its quota yields only then.
func (d *poolDispatcher) contended() bool { return d.waiting.Load() > 0 }

func (d *poolDispatcher) work() {
	defer d.wg.Done()
	if d.owner != nil {
		defer d.owner.Done()
	}
	for {
		d.mu.Lock()
		for d.head == len(d.queue) {
			if d.closed {
				d.mu.Unlock()
				return
			}
			d.idle++
			d.cond.Wait()
			d.idle--
		}
		fn := d.queue[d.head]
		d.queue[d.head] = nil
		d.head++
		d.waiting.Add(-1)
		if d.head == len(d.queue) {
			d.queue, d.head = d.queue[:0], 0
		} else if d.head > 1024 && d.head*2 > len(d.queue) {
			n := copy(d.queue, d.queue[d.head:])
			clear(d.queue[n:])
			d.queue, d.head = d.queue[:n], 0
		}
		d.mu.Unlock()
		fn()
	}
}

// close lets the workers finish the queue and exit; it does not wait.
func (d *poolDispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
}

// closeAndWait closes d and waits for its workers. It must not be called from
// one of them.
func (d *poolDispatcher) closeAndWait() {
	d.close()
	d.wg.Wait()
}
