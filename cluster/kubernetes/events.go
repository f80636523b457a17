package kubernetes

// events.go posts Kubernetes Events on the driver pod for the
// application's milestones and failures, as the spark-operator does on its
// SparkApplication: the driver started, executors requested, registered and
// lost, the application succeeded or failed. The driver posts them (it knows
// its pod) with its own client, from a goroutine of their own; a failure to
// post is logged, never fatal.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of the Events on the driver pod.
const (
	EventDriverStarted        = "SparkDriverStarted"
	EventExecutorsRequested   = "SparkExecutorsRequested"
	EventExecutorRegistered   = "SparkExecutorRegistered"
	EventExecutorLost         = "SparkExecutorLost"
	EventApplicationSucceeded = "SparkApplicationSucceeded"
	EventApplicationFailed    = "SparkApplicationFailed"
	eventSourceComponent      = "sparkrpc-driver"
	eventQueueLen             = 256
	maxEventMessageLen        = 1024
)

// eventPoster posts Events on one pod, in order, from its goroutine; post
// does not wait for the API server. A nil *eventPoster posts nothing.
type eventPoster struct {
	client *kubeclient.Client
	pod    metav1.OwnerReference
	ns     string
	log    zerolog.Logger

	mu     sync.Mutex
	closed bool
	queue  chan *corev1.Event
	done   chan struct{}
}

// newEventPoster starts the poster of Events on pod (namespace ns); close
// stops it.
func newEventPoster(client *kubeclient.Client, ns string, pod metav1.OwnerReference, log zerolog.Logger) *eventPoster {
	e := &eventPoster{client: client, pod: pod, ns: ns, log: log, queue: make(chan *corev1.Event, eventQueueLen), done: make(chan struct{})}
	go e.run()
	return e
}

func (e *eventPoster) run() {
	defer close(e.done)
	for ev := range e.queue {
		ctx, cancel := context.WithTimeout(context.Background(), e.client.Timeout)
		_, err := e.client.CoreV1().Events(e.ns).Create(ctx, ev, metav1.CreateOptions{})
		cancel()
		if err != nil {
			e.log.Warn().Err(e.client.APIError(err, "create", "events", e.ns)).Str("reason", ev.Reason).
				Msg("posting an Event on the driver pod")
		}
	}
}

// post queues an Event of type typ (corev1.EventTypeNormal or
// EventTypeWarning) with reason and message; when the queue is full, or
// after close, it is dropped and logged.
func (e *eventPoster) post(typ, reason, message string) {
	if e == nil {
		return
	}
	if len(message) > maxEventMessageLen {
		message = message[:maxEventMessageLen-3] + "..."
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", e.pod.Name, time.Now().UnixNano()), Namespace: e.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: e.ns, Name: e.pod.Name, UID: e.pod.UID},
		Type:           typ, Reason: reason, Message: message,
		Source:         corev1.EventSource{Component: eventSourceComponent},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		select {
		case e.queue <- ev:
			return
		default:
		}
	}
	e.log.Warn().Str("reason", reason).Msg("an Event on the driver pod dropped: too many waiting, or the application has ended")
}

// close posts what is queued (each post bounded by the client's timeout)
// and stops the poster.
func (e *eventPoster) close() {
	if e == nil {
		return
	}
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.queue)
	}
	e.mu.Unlock()
	<-e.done
}
