package launcher_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/launcher"
)

// A program registers its applications, then hands its command line over to
// Run; here the command line submits the application Hello, compiled into
// this program (spark-internal), on a local master.
func ExampleRun() {
	cluster.RegisterApp("Hello", func(ctx context.Context, sc *cluster.AppContext, args []string) error {
		sc.Printf("Hello, %s\n", args[0])
		return nil
	})
	// In main: os.Exit(launcher.Run(os.Args[1:]))
	code := launcher.Run([]string{"submit", "--master", "local[1]", "--class", "Hello", "--conf", "spark.ui.enabled=false",
		launcher.InternalResource, "world"}, launcher.WithOutput(os.Stdout, io.Discard))
	fmt.Println("exit code", code)
	// Output:
	// Hello, world
	// exit code 0
}
