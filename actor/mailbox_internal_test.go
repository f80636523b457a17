package actor

import (
	"sync"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// recordingInvoker records what a mailbox hands it.
type recordingInvoker struct {
	mu        sync.Mutex
	user      []any
	sys       []any
	escalated []any
	onUser    func(msg any)
	onSys     func(msg any, usersSoFar int)
}

func (r *recordingInvoker) InvokeSystemMessage(msg any) {
	r.mu.Lock()
	r.sys = append(r.sys, msg)
	n := len(r.user)
	r.mu.Unlock()
	if r.onSys != nil {
		r.onSys(msg, n)
	}
}

func (r *recordingInvoker) InvokeUserMessage(msg any) {
	r.mu.Lock()
	r.user = append(r.user, msg)
	r.mu.Unlock()
	if r.onUser != nil {
		r.onUser(msg)
	}
}

func (r *recordingInvoker) EscalateFailure(_ any, msg any) {
	r.mu.Lock()
	r.escalated = append(r.escalated, msg)
	r.mu.Unlock()
}

func newTestMailbox(t *testing.T, inv protoactor.MessageInvoker) *mailbox {
	d := newPoolDispatcher(2, 7) // a small throughput: yield often
	t.Cleanup(d.closeAndWait)
	m := newMailbox().(*mailbox)
	m.RegisterHandlers(inv, d)
	m.Start()
	return m
}

type seqMsg struct{ from, seq int }

func TestMailboxKeepsEachSendersOrder(t *testing.T) {
	const senders, each = 4, 5000
	done := make(chan struct{})
	var count int
	inv := &recordingInvoker{}
	inv.onUser = func(any) {
		count++ // one consumer at a time
		if count == senders*each {
			close(done)
		}
	}
	m := newTestMailbox(t, inv)
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				m.PostUserMessage(seqMsg{s, i})
			}
		})
	}
	wg.Wait()
	testutil.Recv(t, done, 10*time.Second, "every message")
	next := make([]int, senders)
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, msg := range inv.user {
		sm := msg.(seqMsg)
		if sm.seq != next[sm.from] {
			t.Fatalf("sender %d: got %d, want %d", sm.from, sm.seq, next[sm.from])
		}
		next[sm.from]++
	}
	if got := m.UserMessageCount(); got != 0 {
		t.Errorf("UserMessageCount after draining = %d", got)
	}
}

func TestMailboxSystemMessagesFirstAndSuspend(t *testing.T) {
	sysSeen := make(chan int, 1)
	allUser := make(chan struct{})
	inv := &recordingInvoker{}
	inv.onSys = func(msg any, usersSoFar int) {
		if msg == "probe" {
			sysSeen <- usersSoFar
		}
	}
	inv.onUser = func(msg any) {
		if msg == "b" {
			close(allUser)
		}
	}
	m := newTestMailbox(t, inv)
	m.PostSystemMessage(&protoactor.SuspendMailbox{})
	m.PostUserMessage("a")
	m.PostUserMessage("b")
	if got := m.UserMessageCount(); got > 2 {
		t.Errorf("UserMessageCount = %d, want at most 2", got)
	}
	m.PostSystemMessage("probe")
	select {
	case n := <-sysSeen:
		if n != 0 {
			t.Fatalf("%d user messages ran while the mailbox was suspended", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the system message did not run while suspended")
	}
	m.PostSystemMessage(&protoactor.ResumeMailbox{})
	testutil.Recv(t, allUser, 10*time.Second, "the user messages after resume")
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if len(inv.user) != 2 || inv.user[0] != "a" || inv.user[1] != "b" {
		t.Fatalf("user messages = %v, want [a b]", inv.user)
	}
}

func TestMailboxEscalatesAPanicAndGoesOn(t *testing.T) {
	done := make(chan struct{})
	inv := &recordingInvoker{}
	inv.onUser = func(msg any) {
		switch msg {
		case "boom":
			panic("boom")
		case "after":
			close(done)
		}
	}
	m := newTestMailbox(t, inv)
	m.PostUserMessage("boom")
	m.PostUserMessage(nil) // skipped, like an empty queue slot
	m.PostUserMessage("after")
	testutil.Recv(t, done, 10*time.Second, "the message after the panic")
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if len(inv.escalated) != 1 || inv.escalated[0] != "boom" {
		t.Fatalf("escalated = %v, want [boom]", inv.escalated)
	}
	if len(inv.user) != 2 {
		t.Fatalf("user messages = %v, want [boom after]", inv.user)
	}
}
