package netty_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// stuck is an endpoint whose ask handler blocks until release is closed.
type stuck struct {
	entered chan struct{}
	release chan struct{}
}

func (s *stuck) Receive(*actor.Context, proto.Message) error { return nil }

func (s *stuck) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	s.entered <- struct{}{}
	<-s.release
	ctx.Reply(msg)
	return nil
}

// A handler that blocks does not keep Shutdown from closing the socket: the
// peer's pending ask fails at once, while the handler is still blocked, and
// Shutdown's expiring ctx makes it name the endpoint.
func TestShutdownWithBlockedHandlerClosesConnections(t *testing.T) {
	server := newEnv(t, "server", nil)
	s := &stuck{entered: make(chan struct{}, 1), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(s.release) })
	defer release()
	register(t, server, "stuck", s)

	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "stuck")
	f := ref.AskWithTimeout(context.Background(), str("wait"), actor.InfiniteTimeout())
	select {
	case <-s.entered:
	case <-time.After(waitFor):
		t.Fatal("the handler did not start")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := server.Shutdown(ctx)
	var se *actor.ShutdownError
	if !errors.As(err, &se) || len(se.Running) != 1 || se.Running[0] != "stuck" {
		t.Errorf("Shutdown with a blocked handler = %v, want a *ShutdownError naming stuck", err)
	}
	select {
	case <-f.Done():
	case <-time.After(waitFor):
		t.Fatal("the peer's ask is still pending after Shutdown: the blocked handler kept the connection open")
	}
	if _, err := f.Result(); !errors.Is(err, actor.ErrConnectionClosed) {
		t.Errorf("peer's pending ask = %v, want ErrConnectionClosed", err)
	}
	release()
	if err := server.AwaitTermination(testutil.Context(t, waitFor)); err != nil {
		t.Errorf("AwaitTermination: %v", err)
	}
}

// A plain protoactor RequestFuture over TCP to an endpoint that does not
// exist fails with protoactor's ErrDeadLetter, as a local one does.
func TestProtoactorRequestToMissingRemoteEndpoint(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newEnv(t, "client", nil)
	lookup(t, client, server.Address(), actor.VerifierName)
	res, err := client.System().Root.RequestFuture(protoactor.NewPID(server.Identity(), "missing"), str("hi"), waitFor).Result()
	if !errors.Is(err, protoactor.ErrDeadLetter) {
		t.Errorf("RequestFuture to a missing remote endpoint = %v, %v; want ErrDeadLetter", res, err)
	}
}
