package bench

import "sync"

// handoff is the least a mailbox does: a queue under a mutex, and a signal
// that wakes its one consumer, which takes everything queued at once. The
// delivered TCP baselines hand what their readers decode to other
// goroutines through it.
type handoff[T any] struct {
	mu     sync.Mutex
	queue  []T
	closed bool
	sig    chan struct{}
}

func newHandoff[T any]() *handoff[T] { return &handoff[T]{sig: make(chan struct{}, 1)} }

// put queues m and wakes the consumer.
func (q *handoff[T]) put(m T) {
	q.mu.Lock()
	q.queue = append(q.queue, m)
	q.mu.Unlock()
	q.wake()
}

func (q *handoff[T]) wake() {
	select {
	case q.sig <- struct{}{}:
	default:
	}
}

// close ends drain once it has handled what is queued.
func (q *handoff[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

// drain hands every queued message to handle, in order, until close. It
// calls batchDone, when not nil, after each batch taken from the queue.
func (q *handoff[T]) drain(handle func(T), batchDone func() error) {
	var batch []T
	for range q.sig {
		q.mu.Lock()
		batch, q.queue = q.queue, batch[:0]
		closed := q.closed
		q.mu.Unlock()
		for _, m := range batch {
			handle(m)
		}
		clear(batch)
		if batchDone != nil && batchDone() != nil || closed {
			return
		}
	}
}
