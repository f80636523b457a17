package endpoints_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

func init() {
	// Task functions are registered by name in every process of the
	// application, usually in init.
	endpoints.RegisterTask("example.upper", func(_ context.Context, _ endpoints.TaskContext, p []byte) ([]byte, error) {
		return []byte(strings.ToUpper(string(p))), nil
	})
}

// A driver and two executors in one process, over an in-memory network
// (a program would use package netty's envs the same way), running a job of
// three tasks.
func Example() {
	ctx := context.Background()
	net := actor.NewMemNetwork()
	driverEnv, err := actor.NewEnv("sparkDriver", actor.NewConf(), actor.WithTransport(net.Transport("driver-host", 7077)))
	if err != nil {
		panic(err)
	}
	defer driverEnv.Shutdown(ctx)

	c, err := endpoints.StartLocalCluster(ctx, driverEnv, endpoints.LocalClusterConfig{
		Executors: 2, Cores: 2, NewEnv: endpoints.MemEnvFactory(net)})
	if err != nil {
		panic(err)
	}
	defer c.Stop(ctx)
	fmt.Println("driver:", c.Driver.URL())
	fmt.Println("executors:", len(c.Driver.Executors()), "cores:", c.Driver.TotalCores())

	results, err := c.Driver.RunJob(ctx, "example.upper", [][]byte{[]byte("spark"), []byte("rpc"), []byte("go")})
	if err != nil {
		panic(err)
	}
	for i, r := range results {
		fmt.Printf("partition %d: %s\n", i, r)
	}
	// Output:
	// driver: spark://CoarseGrainedScheduler@driver-host:7077
	// executors: 2 cores: 4
	// partition 0: SPARK
	// partition 1: RPC
	// partition 2: GO
}

// An executor process: RunExecutor does the whole handshake with the
// driver at DriverURL and returns when the executor stops. Its error is the
// process's exit status.
func ExampleRunExecutor() {
	ctx := context.Background()
	net := actor.NewMemNetwork()
	driverEnv, _ := actor.NewEnv("sparkDriver", actor.NewConf(), actor.WithTransport(net.Transport("driver-host", 7077)))
	defer driverEnv.Shutdown(ctx)
	d, _ := endpoints.NewDriver(driverEnv)

	done := make(chan error, 1)
	go func() {
		done <- endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{
			DriverURL: d.URL(), ExecutorID: "1", Hostname: "worker-1", Cores: 4,
		}, endpoints.WithEnvFactory(endpoints.MemEnvFactory(net)))
	}()
	if err := d.WaitForExecutors(ctx, 1); err != nil {
		panic(err)
	}
	ex := d.Executors()[0]
	fmt.Println(ex.ID, ex.Host, ex.TotalCores, ex.FreeCores)

	// Stopping the driver stops its executors; RunExecutor returns nil.
	_ = d.Stop(ctx)
	fmt.Println("executor returned:", <-done)
	// Output:
	// 1 worker-1 4 4
	// executor returned: <nil>
}

// printingClusterManager stands for a cluster manager, e.g. YARN's
// application master.
type printingClusterManager struct{}

func (printingClusterManager) RequestTotalExecutors(_ context.Context, total int) error {
	fmt.Println("cluster manager: run", total, "executors")
	return nil
}

func (printingClusterManager) KillExecutors(_ context.Context, ids []string) error {
	fmt.Println("cluster manager: release", ids)
	return nil
}

func (printingClusterManager) KillAndReplaceExecutors(_ context.Context, ids []string) error {
	fmt.Println("cluster manager: kill and replace", ids)
	return nil
}

func (printingClusterManager) ExecutorLossReason(context.Context, string) (string, error) {
	return "Container exited with code 137", nil
}

// A driver that asks its cluster manager for executors and releases the
// ones it no longer needs.
func ExampleWithClusterManager() {
	ctx := context.Background()
	net := actor.NewMemNetwork()
	driverEnv, _ := actor.NewEnv("sparkDriver", actor.NewConf(), actor.WithTransport(net.Transport("driver-host", 7077)))
	defer driverEnv.Shutdown(ctx)
	c, err := endpoints.StartLocalCluster(ctx, driverEnv, endpoints.LocalClusterConfig{
		Executors: 2, NewEnv: endpoints.MemEnvFactory(net),
		DriverOptions: []endpoints.DriverOption{endpoints.WithClusterManager(printingClusterManager{})}})
	if err != nil {
		panic(err)
	}
	defer c.Stop(ctx)

	if err := c.Driver.RequestTotalExecutors(ctx, 3); err != nil {
		panic(err)
	}
	killed, err := c.Driver.KillExecutors(ctx, []string{"2"})
	fmt.Println("killed:", killed, err)
	fmt.Println("executors left:", len(c.Driver.Executors()))
	// Output:
	// cluster manager: run 3 executors
	// cluster manager: release [2]
	// killed: [2] <nil>
	// executors left: 1
}
