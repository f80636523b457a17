package appmaster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

func TestApplicationMasterUnknownApp(t *testing.T) {
	err := appmaster.Run(testutil.Context(t, 10*time.Second), appmaster.Config{AppID: "application_1_0001",
		ResourceManager: actor.NewRpcAddress("127.0.0.1", 1), Class: "NoSuchApp", Logger: zerolog.Nop()})
	var ee *cluster.AMExitError
	if !errors.As(err, &ee) || ee.Code != cluster.ExitExceptionUserClass || !strings.Contains(ee.Reason, "application class not found: NoSuchApp") {
		t.Fatalf("err = %v", err)
	}
}

func TestApplicationMasterTimesOutWithoutDriver(t *testing.T) {
	conf := actor.NewConf().Set(cluster.KeyAMWaitTime, "100ms")
	err := appmaster.Run(testutil.Context(t, 10*time.Second), appmaster.Config{AppID: "application_1_0001",
		ResourceManager: actor.NewRpcAddress("127.0.0.1", 1), Class: "NoContextApp", Conf: conf, Logger: zerolog.Nop()})
	var ee *cluster.AMExitError
	if !errors.As(err, &ee) || ee.Code != cluster.ExitSCNotInited || ee.Reason != "Timed out waiting for SparkContext." {
		t.Fatalf("err = %v", err)
	}
}

func init() {
	cluster.RegisterApp("NoContextApp", func(ctx context.Context, _ *cluster.AppContext, _ []string) error {
		<-ctx.Done()
		return ctx.Err()
	})
}
