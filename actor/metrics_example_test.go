package actor_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// echo replies to every ask with the request.
type echo struct{}

func (echo) Receive(*actor.Context, proto.Message) error { return nil }

func (echo) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(msg)
	return nil
}

// Every env has a Prometheus registry of its own; MetricsHandler serves it
// on whatever HTTP server the program runs (here a test server).
func ExampleEnv_MetricsHandler() {
	env, err := actor.NewEnv("example", nil)
	if err != nil {
		panic(err)
	}
	defer env.Shutdown(context.Background())
	ref, err := env.RegisterEndpoint("echo", echo{})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := ref.AskSync(context.Background(), wrapperspb.String("ping")); err != nil {
			panic(err)
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", env.MetricsHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "sparkrpc_messages_") || strings.HasPrefix(line, "sparkrpc_asks_") {
			fmt.Println(line)
		}
	}
	// Output:
	// sparkrpc_asks_in_flight 0
	// sparkrpc_asks_total 3
	// sparkrpc_messages_dropped_total 0
	// sparkrpc_messages_received_total{endpoint="echo",type="google.protobuf.StringValue"} 3
}
