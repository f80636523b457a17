package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// A configuration struct without a required field is refused at once with
// an error that matches ErrInvalidConfig and names the field.
func TestConfigRequiredFields(t *testing.T) {
	local, err := cluster.ParseMaster("local[1]")
	if err != nil {
		t.Fatal(err)
	}
	rm := actor.NewRpcAddress("127.0.0.1", 1)
	res := cluster.Resource{MemoryMB: 512, Cores: 1}
	for _, tc := range []struct {
		name, field string
		run         func(ctx context.Context) error
	}{
		{"submit without master", "SubmitConfig.Master", func(ctx context.Context) error {
			return cluster.Submit(ctx, cluster.SubmitConfig{Class: "example.SumOfSquares"})
		}},
		{"submit without class", "SubmitConfig.Class", func(ctx context.Context) error {
			return cluster.Submit(ctx, cluster.SubmitConfig{Master: local})
		}},
		{"AM without app id", "AMConfig.AppID", func(ctx context.Context) error {
			return cluster.RunApplicationMaster(ctx, cluster.AMConfig{ResourceManager: rm, Class: "example.SumOfSquares"})
		}},
		{"AM without resource manager", "AMConfig.ResourceManager", func(ctx context.Context) error {
			return cluster.RunApplicationMaster(ctx, cluster.AMConfig{AppID: "application_1_0001", Class: "example.SumOfSquares"})
		}},
		{"client-mode AM without driver", "AMConfig.DriverURL", func(ctx context.Context) error {
			return cluster.RunApplicationMaster(ctx, cluster.AMConfig{AppID: "application_1_0001", ResourceManager: rm, ClientMode: true})
		}},
		{"node manager without resource manager", "NodeManagerConfig.ResourceManager", func(ctx context.Context) error {
			_, err := cluster.StartNodeManager(ctx, nil, cluster.NodeManagerConfig{Capability: res, Dir: t.TempDir()})
			return err
		}},
		{"node manager without capability", "NodeManagerConfig.Capability", func(ctx context.Context) error {
			_, err := cluster.StartNodeManager(ctx, nil, cluster.NodeManagerConfig{ResourceManager: rm, Dir: t.TempDir()})
			return err
		}},
		{"node manager without folder", "NodeManagerConfig.Dir", func(ctx context.Context) error {
			_, err := cluster.StartNodeManager(ctx, nil, cluster.NodeManagerConfig{ResourceManager: rm, Capability: res})
			return err
		}},
		{"local cluster without workers", "LocalClusterConfig.Workers", func(ctx context.Context) error {
			_, err := cluster.StartLocalCluster(ctx, cluster.LocalClusterConfig{WorkerCores: 1, WorkerMemoryMB: 512})
			return err
		}},
		{"local cluster without memory", "LocalClusterConfig.WorkerMemoryMB", func(ctx context.Context) error {
			_, err := cluster.StartLocalCluster(ctx, cluster.LocalClusterConfig{Workers: 1, WorkerCores: 1})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(testContext(t, 10*time.Second))
			if !errors.Is(err, cluster.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %v, want ErrInvalidConfig naming %s", err, tc.field)
			}
		})
	}
	// The application master's error is its exit status as well.
	err = cluster.RunApplicationMaster(testContext(t, 10*time.Second), cluster.AMConfig{ResourceManager: rm})
	var ee *cluster.ExitError
	if !errors.As(err, &ee) || ee.Code != cluster.ExitUncaughtException {
		t.Fatalf("AM error %v, want an *ExitError with code %d", err, cluster.ExitUncaughtException)
	}
}
