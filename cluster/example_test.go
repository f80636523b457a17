package cluster_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

func init() {
	endpoints.RegisterTask("example.square", func(_ context.Context, _ endpoints.TaskContext, p []byte) ([]byte, error) {
		return []byte{p[0] * p[0]}, nil
	})
	cluster.RegisterApp("example.SumOfSquares", func(ctx context.Context, sc *cluster.AppContext, args []string) error {
		d, err := sc.Driver(ctx)
		if err != nil {
			return err
		}
		res, err := d.RunJob(ctx, "example.square", [][]byte{{1}, {2}, {3}, {4}})
		if err != nil {
			return err
		}
		sum := 0
		for _, r := range res {
			sum += int(r[0])
		}
		sc.Printf("sum of squares: %d\n", sum)
		return nil
	})
}

// An application is a function registered by name; Submit runs it on a
// master, here local[2]: a driver and one executor with 2 cores in this
// process.
func ExampleSubmit() {
	master, err := cluster.ParseMaster("local[2]")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = managers.Submit(ctx, cluster.SubmitConfig{Master: master, Class: "example.SumOfSquares",
		Conf: actor.NewConf(), Stdout: os.Stdout, Logger: zerolog.Nop()})
	fmt.Println("error:", err)
	// Output:
	// sum of squares: 30
	// error: <nil>
}

func ExampleParseMaster() {
	for _, s := range []string{"local[4]", "local-cluster[2,1,1024]", "rm://127.0.0.1:8032", "yarn"} {
		m, err := cluster.ParseMaster(s)
		switch {
		case err != nil:
			fmt.Println(err)
		case m.Kind == cluster.MasterLocal:
			fmt.Printf("%s: driver and an executor with %d cores in this process\n", m, m.Cores)
		case m.Kind == cluster.MasterLocalCluster:
			fmt.Printf("%s: embedded cluster of %d nodes with %d cores and %d MiB\n", m, m.Workers, m.WorkerCores, m.WorkerMemoryMB)
		case m.Kind == cluster.MasterRM:
			fmt.Printf("%s: resource manager at %s\n", m, m.Address.HostPort())
		}
	}
	// Output:
	// local[4]: driver and an executor with 4 cores in this process
	// local-cluster[2,1,1024]: embedded cluster of 2 nodes with 1 cores and 1024 MiB
	// rm://127.0.0.1:8032: resource manager at 127.0.0.1:8032
	// cluster: invalid master URL: "yarn": unknown master (expected local, local[N], local[*], local-cluster[W,C,M], rm://host:port or k8s://https://host:port)
}

func ExampleAppID() {
	fmt.Println(cluster.AppID(1700000000000, 7))
	// Output: application_1700000000000_0007
}
