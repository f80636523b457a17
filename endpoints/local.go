package endpoints

// This file holds LocalCluster: a driver and its executors in one process.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/sparkrpc/sparkrpc/actor"
)

// LocalClusterConfig describes an in-process cluster: a driver on a given
// env and executors whose envs come from NewEnv, all in one process. It
// serves local[N] masters, tests and benchmarks.
type LocalClusterConfig struct {
	// Executors is the number of executors (ids "1".."N"); Cores the cores
	// of each (default 1).
	Executors int
	Cores     int
	// NewEnv creates the executors' envs (required).
	NewEnv EnvFactory
	// Hostname is the executors' host name (default "localhost").
	Hostname string
	// FilesDir is the executors' folder of added files (ExecutorConfig's;
	// default: a temporary folder per executor).
	FilesDir string
	// DriverOptions and ExecutorOptions are passed to NewDriver and to
	// every RunExecutor.
	DriverOptions   []DriverOption
	ExecutorOptions []ExecutorOption
}

// LocalCluster is a driver and its executors running in this process.
type LocalCluster struct {
	// Driver is the cluster's driver.
	Driver *Driver

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   map[string]error
	// exited, while StartLocalCluster waits for its executors, is told of
	// each executor that returns.
	exited func(id string, err error)
}

// StartLocalCluster creates a driver on driverEnv (a listening env), starts
// cfg.Executors executors with RunExecutor on goroutines of their own, and
// waits until every one of them is registered and ready, or ctx ends.
func StartLocalCluster(ctx context.Context, driverEnv *actor.Env, cfg LocalClusterConfig) (*LocalCluster, error) {
	if cfg.NewEnv == nil {
		return nil, ErrNoEnvFactory
	}
	if cfg.Executors < 0 {
		return nil, fmt.Errorf("%w: %d executors", ErrInvalidConfig, cfg.Executors)
	}
	if cfg.Cores <= 0 {
		cfg.Cores = 1
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "localhost"
	}
	d, err := NewDriver(driverEnv, cfg.DriverOptions...)
	if err != nil {
		return nil, err
	}
	c := &LocalCluster{Driver: d, errs: make(map[string]error)}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	// An executor that returns before the cluster is up never becomes
	// ready: stop waiting for it rather than until ctx ends.
	waitCtx, stopWaiting := context.WithCancelCause(ctx)
	defer stopWaiting(nil)
	c.exited = func(id string, err error) {
		if err == nil {
			err = errors.New("it stopped")
		}
		stopWaiting(fmt.Errorf("executor %s returned before it was ready: %w", id, err))
	}
	opts := append([]ExecutorOption{WithEnvFactory(cfg.NewEnv)}, cfg.ExecutorOptions...)
	for i := 1; i <= cfg.Executors; i++ {
		id := strconv.Itoa(i)
		c.StartExecutor(runCtx, ExecutorConfig{DriverURL: d.URL(), ExecutorID: id, Hostname: cfg.Hostname, Cores: cfg.Cores,
			FilesDir: cfg.FilesDir}, opts...)
	}
	err = d.WaitForExecutors(waitCtx, cfg.Executors)
	c.mu.Lock()
	c.exited = nil
	c.mu.Unlock()
	if err != nil {
		_ = c.Stop(context.Background())
		return nil, errors.Join(append([]error{err}, c.exitErrors()...)...)
	}
	return c, nil
}

// StartExecutor runs one more executor with RunExecutor on a goroutine of
// its own; its result is in ExecutorErrors once it returned.
func (c *LocalCluster) StartExecutor(ctx context.Context, cfg ExecutorConfig, opts ...ExecutorOption) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := RunExecutor(ctx, cfg, opts...)
		c.mu.Lock()
		c.errs[cfg.ExecutorID] = err
		exited := c.exited
		c.mu.Unlock()
		if exited != nil {
			exited(cfg.ExecutorID, err)
		}
	}()
}

// ExecutorErrors returns what RunExecutor returned for each executor that
// has returned (nil for a clean stop).
func (c *LocalCluster) ExecutorErrors() map[string]error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]error, len(c.errs))
	for k, v := range c.errs {
		out[k] = v
	}
	return out
}

func (c *LocalCluster) exitErrors() []error {
	var errs []error
	for id, err := range c.ExecutorErrors() {
		if err != nil {
			errs = append(errs, fmt.Errorf("executor %s: %w", id, err))
		}
	}
	return errs
}

// Stop stops the driver (and so every executor), waits for the executors
// to return, and reports the errors of those that did not stop cleanly. It
// does not shut the driver's env down.
func (c *LocalCluster) Stop(ctx context.Context) error {
	err := c.Driver.Stop(ctx)
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		c.cancel()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return errors.Join(err, fmt.Errorf("waiting for executors: %w", context.Cause(ctx)))
	}
	c.cancel()
	return errors.Join(append([]error{err}, c.exitErrors()...)...)
}
