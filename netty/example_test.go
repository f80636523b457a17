package netty_test

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A server env with a greeter endpoint, and a client-mode env that looks it up
// by URI and asks it over TCP.
func Example() {
	ctx := context.Background()
	quiet := netty.WithLogger(zerolog.Nop())
	server, err := netty.NewEnv("server", nil, quiet) // 127.0.0.1, random port
	if err != nil {
		panic(err)
	}
	defer server.Shutdown(ctx) //nolint:errcheck
	if _, err := server.RegisterEndpoint("greeter", greeter{}); err != nil {
		panic(err)
	}

	client, err := netty.NewEnv("client", nil, quiet, netty.WithClientMode())
	if err != nil {
		panic(err)
	}
	defer client.Shutdown(ctx) //nolint:errcheck
	ref, err := client.SetupEndpointRefByURI(ctx, "spark://greeter@"+server.Address().HostPort())
	if err != nil {
		panic(err)
	}
	reply, err := actor.AskAs[*wrapperspb.StringValue](ctx, ref, wrapperspb.String("world"))
	if err != nil {
		panic(err)
	}
	fmt.Println(reply.GetValue())
	_, err = client.SetupEndpointRef(ctx, server.Address(), "nobody")
	fmt.Println(err != nil)
	// Output:
	// hello, world
	// true
}

type greeter struct{}

func (greeter) Receive(*actor.Context, proto.Message) error { return actor.ErrUnsupportedMessage }

func (greeter) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	ctx.Reply(wrapperspb.String("hello, " + msg.(*wrapperspb.StringValue).GetValue()))
	return nil
}
