package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/launcher"
)

func main() {
	cluster.RegisterApp("SelfKill", selfKill)
	os.Exit(launcher.Run(os.Args[1:]))
}

func selfKill(ctx context.Context, sc *cluster.AppContext, _ []string) error {
	if _, err := sc.Driver(ctx); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	kctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(kctx, exe, "submit", "--master", sc.Conf().Get("spark.master", ""), "--kill", sc.AppID()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("submit --kill: %w\n%s", err, out)
	}
	sc.Printf("%s", out)
	return nil
}
