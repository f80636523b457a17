package examples

import (
	"context"
	"errors"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

func init() {
	cluster.RegisterApp("ErrorApp", ErrorApp)
	cluster.RegisterApp("NoContextApp", NoContextApp)
}

// ErrorApp runs a small job, then returns an error whose text is its
// arguments (default "intentional failure").
func ErrorApp(ctx context.Context, sc *cluster.AppContext, args []string) error {
	d, err := sc.Driver(ctx)
	if err != nil {
		return err
	}
	if _, err := d.RunJob(ctx, endpoints.NoopTaskName, make([][]byte, 2)); err != nil {
		return err
	}
	msg := strings.Join(args, " ")
	if msg == "" {
		msg = "intentional failure"
	}
	return errors.New(msg)
}

// NoContextApp waits until it is cancelled without ever bringing up its
// driver.
func NoContextApp(ctx context.Context, sc *cluster.AppContext, args []string) error {
	<-ctx.Done()
	return ctx.Err()
}
