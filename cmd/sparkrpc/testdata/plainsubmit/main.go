// Command plainsubmit is a program that submits its own application with
// cluster.Submit from a plain main, never handing over to the launcher:
// what a user might write first. With -exe it claims to be the containers'
// program (SubmitConfig.Executable), so that containers start it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
)

func main() {
	claim := flag.Bool("exe", false, "give this program as SubmitConfig.Executable")
	flag.Parse()
	cluster.RegisterApp("Plain", func(ctx context.Context, sc *cluster.AppContext, args []string) error {
		_, err := sc.Driver(ctx)
		return err
	})
	m, err := cluster.ParseMaster("local-cluster[1,1,512]")
	if err != nil {
		panic(err)
	}
	cfg := cluster.SubmitConfig{Master: m, Class: "Plain", Stdout: os.Stdout, Stderr: os.Stderr}
	if *claim {
		if cfg.Executable, err = os.Executable(); err != nil {
			panic(err)
		}
	}
	if err := managers.Submit(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "plainsubmit:", err)
		os.Exit(1)
	}
}
