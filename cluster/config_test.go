package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/yarn"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
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
			return managers.Submit(ctx, cluster.SubmitConfig{Class: "example.SumOfSquares"})
		}},
		{"submit without class", "SubmitConfig.Class", func(ctx context.Context) error {
			return managers.Submit(ctx, cluster.SubmitConfig{Master: local})
		}},
		{"AM without app id", "appmaster.Config.AppID", func(ctx context.Context) error {
			return appmaster.Run(ctx, appmaster.Config{ResourceManager: rm, Class: "example.SumOfSquares"})
		}},
		{"AM without resource manager", "appmaster.Config.ResourceManager", func(ctx context.Context) error {
			return appmaster.Run(ctx, appmaster.Config{AppID: "application_1_0001", Class: "example.SumOfSquares"})
		}},
		{"client-mode AM without driver", "appmaster.Config.DriverURL", func(ctx context.Context) error {
			return appmaster.Run(ctx, appmaster.Config{AppID: "application_1_0001", ResourceManager: rm, ClientMode: true})
		}},
		{"node manager without resource manager", "nodemanager.Config.ResourceManager", func(ctx context.Context) error {
			_, err := nodemanager.Start(ctx, nil, nodemanager.Config{Capability: res, Dir: t.TempDir()})
			return err
		}},
		{"node manager without capability", "nodemanager.Config.Capability", func(ctx context.Context) error {
			_, err := nodemanager.Start(ctx, nil, nodemanager.Config{ResourceManager: rm, Dir: t.TempDir()})
			return err
		}},
		{"node manager without folder", "nodemanager.Config.Dir", func(ctx context.Context) error {
			_, err := nodemanager.Start(ctx, nil, nodemanager.Config{ResourceManager: rm, Capability: res})
			return err
		}},
		{"local cluster without workers", "yarn.LocalClusterConfig.Workers", func(ctx context.Context) error {
			_, err := yarn.StartLocalCluster(ctx, yarn.LocalClusterConfig{WorkerCores: 1, WorkerMemoryMB: 512})
			return err
		}},
		{"local cluster without memory", "yarn.LocalClusterConfig.WorkerMemoryMB", func(ctx context.Context) error {
			_, err := yarn.StartLocalCluster(ctx, yarn.LocalClusterConfig{Workers: 1, WorkerCores: 1})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(testutil.Context(t, 10*time.Second))
			if !errors.Is(err, cluster.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("error %v, want ErrInvalidConfig naming %s", err, tc.field)
			}
		})
	}
	// The application master's error is its exit status as well.
	err = appmaster.Run(testutil.Context(t, 10*time.Second), appmaster.Config{ResourceManager: rm})
	var ee *cluster.AMExitError
	if !errors.As(err, &ee) || ee.Code != cluster.ExitUncaughtException {
		t.Fatalf("AM error %v, want an *AMExitError with code %d", err, cluster.ExitUncaughtException)
	}
}
