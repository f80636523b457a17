package managers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/local"
)

// ignoresCtx is what the managers.test.IgnoresCtx application waits on
// (not its ctx, as an application blocked in code of its own does) and
// tells when it runs and returns.
var ignoresCtx struct {
	sync.Mutex
	running, release, returned chan struct{}
}

func init() {
	cluster.RegisterApp("managers.test.IgnoresCtx", func(ctx context.Context, sc *cluster.AppContext, _ []string) error {
		if _, err := sc.Driver(ctx); err != nil {
			return err
		}
		ignoresCtx.Lock()
		running, release, returned := ignoresCtx.running, ignoresCtx.release, ignoresCtx.returned
		ignoresCtx.Unlock()
		defer close(returned)
		close(running)
		<-release
		return nil
	})
}

// A submission interrupted (SIGINT, SIGTERM: its ctx ends) while the
// application is busy in code that does not watch its ctx (a computation,
// a read without a deadline) still ends, within a bound, with the
// interruption as its error: submit stops promptly on a signal in every
// state (design, section 8). Before, Submit waited for the application to
// return, for ever.
func TestInterruptedSubmitEndsThoughTheApplicationIgnoresItsContext(t *testing.T) {
	running, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	ignoresCtx.Lock()
	ignoresCtx.running, ignoresCtx.release, ignoresCtx.returned = running, release, returned
	ignoresCtx.Unlock()
	defer func() {
		close(release)
		<-returned
	}()
	m, err := cluster.ParseMaster("local[1]")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- cluster.Submit(ctx, cluster.SubmitConfig{Master: m, Class: "managers.test.IgnoresCtx",
			Conf: actor.NewConf().Set("spark.ui.enabled", "false"), Logger: zerolog.Nop()}, local.Manager{})
	}()
	select {
	case <-running:
	case err := <-done:
		t.Fatalf("Submit returned before the application ran: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the application did not start")
	}
	cancel() // the signal
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted Submit: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Submit did not return within 30s of its interruption: it waits for an application that ignores its ctx")
	}
}
