package actor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// greeter answers a name with a greeting and prints the one-way messages it
// gets.
type greeter struct {
	done chan struct{}
}

func (g *greeter) OnStart(ctx *actor.Context) error {
	fmt.Println("started", ctx.Name())
	return nil
}

func (g *greeter) Receive(_ *actor.Context, msg proto.Message) error {
	fmt.Println("received", msg.(*wrapperspb.StringValue).GetValue())
	return nil
}

func (g *greeter) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	name, ok := msg.(*wrapperspb.StringValue)
	if !ok {
		return actor.ErrUnsupportedMessage
	}
	ctx.Reply(wrapperspb.String("Hello, " + name.GetValue()))
	return nil
}

func (g *greeter) OnStop(*actor.Context) error {
	fmt.Println("stopped")
	close(g.done)
	return nil
}

func ExampleEnv_RegisterEndpoint() {
	env, err := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	if err != nil {
		panic(err)
	}
	defer env.Shutdown(context.Background())

	g := &greeter{done: make(chan struct{})}
	ref, err := env.RegisterEndpoint("greeter", g)
	if err != nil {
		panic(err)
	}
	// Messages are handled one at a time, in order: OnStart, then the
	// sends, then, after Stop, OnStop.
	_ = ref.Send(wrapperspb.String("one"))
	_ = ref.Send(wrapperspb.String("two"))
	_ = env.Stop(ref)
	<-g.done

	// The name is free again; a second registration under a taken name fails.
	ref, err = env.RegisterEndpoint("greeter", &greeter{done: make(chan struct{})})
	if err != nil {
		panic(err)
	}
	reply, _ := actor.AskAs[*wrapperspb.StringValue](context.Background(), ref, wrapperspb.String("again"))
	fmt.Println(reply.GetValue())
	_, err = env.RegisterEndpoint("greeter", &greeter{})
	fmt.Println(err)
	// Output:
	// started greeter
	// received one
	// received two
	// stopped
	// started greeter
	// Hello, again
	// There is already an RpcEndpoint called greeter
	// stopped
}

func ExampleRef_Send() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())

	got := make(chan string, 1)
	ref, _ := env.RegisterEndpoint("sink", actor.ReceiveFunc(func(_ *actor.Context, msg proto.Message) error {
		got <- msg.(*wrapperspb.StringValue).GetValue()
		return nil
	}))
	if err := ref.Send(wrapperspb.String("hello")); err != nil {
		panic(err)
	}
	fmt.Println(<-got)

	// Sending to a stopped endpoint fails at once.
	_ = env.Stop(ref)
	fmt.Println(ref.Send(wrapperspb.String("too late")))
	// Output:
	// hello
	// Could not find sink.
}

func ExampleRef_AskSync() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())
	ref, _ := env.RegisterEndpoint("greeter", &greeter{done: make(chan struct{})})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := ref.AskSync(ctx, wrapperspb.String("Spark"))
	if err != nil {
		panic(err)
	}
	fmt.Println(reply.(*wrapperspb.StringValue).GetValue())

	// A message the endpoint does not handle fails the asker.
	_, err = ref.AskSync(ctx, wrapperspb.Int64(42))
	fmt.Println(errors.Is(err, actor.ErrUnsupportedMessage))
	// Output:
	// started greeter
	// Hello, Spark
	// true
	// stopped
}

func ExampleAskAs() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())
	ref, _ := env.RegisterEndpoint("greeter", &greeter{done: make(chan struct{})})

	ctx := context.Background()
	greeting, err := actor.AskAs[*wrapperspb.StringValue](ctx, ref, wrapperspb.String("Go"))
	fmt.Println(greeting.GetValue(), err)

	// Expecting the wrong type is an error, not a panic.
	_, err = actor.AskAs[*wrapperspb.Int64Value](ctx, ref, wrapperspb.String("Go"))
	var rte *actor.ReplyTypeError
	fmt.Println(errors.As(err, &rte), err)
	// Output:
	// started greeter
	// Hello, Go <nil>
	// true unexpected reply type: want google.protobuf.Int64Value, got google.protobuf.StringValue
	// stopped
}

func ExampleRef_AskWithTimeout() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())
	ref, _ := env.RegisterEndpoint("silent", silent{})

	timeout := actor.RpcTimeout{Duration: 10 * time.Millisecond, Key: "spark.example.timeout"}
	_, err := ref.AskWithTimeout(context.Background(), wrapperspb.String("hi"), timeout).Result()
	var te *actor.RpcTimeoutError
	fmt.Println(errors.As(err, &te), errors.Is(err, actor.ErrTimeout))
	fmt.Println(err)
	// Output:
	// true true
	// Cannot receive any reply from spark-client://silent in 10 milliseconds. This timeout is controlled by spark.example.timeout
}

// silent takes asks and never answers them.
type silent struct{}

func (silent) Receive(*actor.Context, proto.Message) error             { return nil }
func (silent) ReceiveAndReply(*actor.CallContext, proto.Message) error { return nil }

func ExampleCallContext_Reply() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	defer env.Shutdown(context.Background())

	// The handler returns at once and answers later, from another goroutine.
	ref, _ := env.RegisterEndpoint("later", later{})
	reply, err := ref.AskSync(context.Background(), wrapperspb.String("job"))
	fmt.Println(reply.(*wrapperspb.StringValue).GetValue(), err)
	// Output:
	// job done <nil>
}

type later struct{}

func (later) Receive(*actor.Context, proto.Message) error { return actor.ErrUnsupportedMessage }

func (later) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	job := msg.(*wrapperspb.StringValue).GetValue()
	go func() { ctx.Reply(wrapperspb.String(job + " done")) }()
	return nil
}

func ExampleNewRpcTimeout() {
	conf := actor.NewConf().Set("spark.network.timeout", "30s")
	t, _ := actor.NewRpcTimeout(conf, []string{"spark.rpc.askTimeout", "spark.network.timeout"}, "120s")
	fmt.Println(t)
	t, _ = actor.NewRpcTimeout(actor.NewConf(), []string{"spark.rpc.askTimeout", "spark.network.timeout"}, "120s")
	fmt.Println(t)
	_, err := actor.NewRpcTimeout(actor.NewConf(), []string{"spark.rpc.lookupTimeout"}, "")
	fmt.Println(errors.Is(err, actor.ErrKeyNotSet), err)
	// Output:
	// 30s (spark.network.timeout)
	// 2m0s (spark.rpc.askTimeout)
	// true configuration key not set: spark.rpc.lookupTimeout
}

func ExampleParseTime() {
	for _, s := range []string{"120s", "10ms", "1m", "2h", "90"} {
		d, _ := actor.ParseTime(s, time.Second) // a bare number is in seconds here
		fmt.Println(s, "=", d)
	}
	_, err := actor.ParseTime("ten seconds", time.Second)
	fmt.Println(err != nil)
	// Output:
	// 120s = 2m0s
	// 10ms = 10ms
	// 1m = 1m0s
	// 2h = 2h0m0s
	// 90 = 1m30s
	// true
}

func ExampleParseSize() {
	for _, s := range []string{"128m", "1g", "64k", "128"} {
		n, _ := actor.ParseSize(s, 1<<20) // a bare number is in MiB here
		fmt.Println(s, "=", n)
	}
	// Output:
	// 128m = 134217728
	// 1g = 1073741824
	// 64k = 65536
	// 128 = 134217728
}

func ExampleConf_LoadProperties() {
	conf := actor.NewConf()
	_ = conf.LoadProperties(strings.NewReader(`
# spark-defaults.conf
spark.rpc.askTimeout   30s
spark.app.name=example
`))
	_ = conf.SetFromArg("spark.rpc.netty.dispatcher.numThreads=4")
	for _, k := range conf.Keys() {
		fmt.Println(k, "=", conf.Get(k, ""))
	}
	d, _ := conf.GetDuration("spark.rpc.askTimeout", "120s", time.Second)
	fmt.Println(d)
	// Output:
	// spark.app.name = example
	// spark.rpc.askTimeout = 30s
	// spark.rpc.netty.dispatcher.numThreads = 4
	// 30s
}

func ExampleNewMemNetwork() {
	// Two envs that reach each other through an in-memory network: a server
	// that listens at driver:7077 and a client that does not listen.
	network := actor.NewMemNetwork()
	quiet := actor.WithLogger(zerolog.Nop())
	server, _ := actor.NewEnv("driver", nil, quiet, actor.WithTransport(network.Transport("driver", 7077)))
	client, _ := actor.NewEnv("executor", nil, quiet, actor.WithTransport(network.ClientTransport()))
	defer server.Shutdown(context.Background())
	defer client.Shutdown(context.Background())

	_, _ = server.RegisterEndpoint("greeter", &greeter{done: make(chan struct{})})

	ctx := context.Background()
	ref, err := client.SetupEndpointRefByURI(ctx, "spark://greeter@driver:7077")
	if err != nil {
		panic(err)
	}
	// The ask is queued behind the endpoint's OnStart, so "started greeter"
	// is printed before the reply arrives.
	reply, _ := actor.AskAs[*wrapperspb.StringValue](ctx, ref, wrapperspb.String("executor"))
	fmt.Println(ref)
	fmt.Println(reply.GetValue())

	_, err = client.SetupEndpointRef(ctx, server.Address(), "missing")
	fmt.Println(err)
	// Output:
	// started greeter
	// spark://greeter@driver:7077
	// Hello, executor
	// Cannot find endpoint: spark://missing@driver:7077
	// stopped
}

func ExampleEnv_Shutdown() {
	env, _ := actor.NewEnv("example", nil, actor.WithLogger(zerolog.Nop()))
	ref, _ := env.RegisterEndpoint("greeter", &greeter{done: make(chan struct{})})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Every endpoint gets OnStop; then the env refuses everything.
	if err := env.Shutdown(ctx); err != nil {
		panic(err)
	}
	fmt.Println(ref.Send(wrapperspb.String("hi")))
	_, err := env.RegisterEndpoint("other", &greeter{})
	fmt.Println(errors.Is(err, actor.ErrEnvStopped))
	// Output:
	// started greeter
	// stopped
	// RpcEnv has been stopped
	// true
}

// A driver serves a file; an executor, in client mode, reads it and
// fetches it into its working folder. Over TCP (package netty) it is the
// same: the download goes over the envs' connection.
func ExampleEnv_FileServer() {
	network := actor.NewMemNetwork()
	driver, err := actor.NewEnv("driver", nil, actor.WithTransport(network.Transport("driver-host", 7078)))
	if err != nil {
		panic(err)
	}
	defer driver.Shutdown(context.Background())
	executor, err := actor.NewEnv("executor", nil, actor.WithTransport(network.ClientTransport()))
	if err != nil {
		panic(err)
	}
	defer executor.Shutdown(context.Background())

	dir, err := os.MkdirTemp("", "fileserver-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "my app.conf")
	if err := os.WriteFile(path, []byte("spark.executor.cores=2\n"), 0o600); err != nil {
		panic(err)
	}
	uri, err := driver.FileServer().AddFile(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(uri)

	ctx := context.Background()
	rc, err := executor.OpenChannel(ctx, uri)
	if err != nil {
		panic(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		panic(err)
	}
	fmt.Print(string(data))

	workDir := filepath.Join(dir, "work")
	if err := os.Mkdir(workDir, 0o700); err != nil {
		panic(err)
	}
	local, err := executor.FetchFile(ctx, uri, workDir)
	if err != nil {
		panic(err)
	}
	fmt.Println(filepath.Base(local))

	_, err = executor.OpenChannel(ctx, driver.Address().SparkURL()+"/files/missing")
	fmt.Println(errors.Is(err, actor.ErrFileNotFound))
	// Output:
	// spark://driver-host:7078/files/my%20app.conf
	// spark.executor.cores=2
	// my app.conf
	// true
}

// owner remembers the env that claimed it first, and takes orders from that
// env (or its own) only.
type owner struct {
	claimedBy string
	done      chan struct{}
}

func (*owner) PeerAware() bool { return true }

func (o *owner) Receive(ctx *actor.Context, msg proto.Message) error {
	switch m := msg.(type) {
	case *wrapperspb.StringValue: // "claim"
		if o.claimedBy == "" {
			o.claimedBy = ctx.Peer()
		}
	case *wrapperspb.Int64Value: // an order
		if p := ctx.Peer(); p != "" && p != o.claimedBy {
			fmt.Println("order", m.GetValue(), "refused: not from the owner's env")
		} else {
			fmt.Println("order", m.GetValue(), "taken")
		}
		if m.GetValue() == 2 {
			close(o.done)
		}
	}
	return nil
}

func ExamplePeerAware() {
	// One-way messages carry no sender, so an endpoint that authorizes by
	// who sends asks its transport (PeerAware) and reads Context.Peer: the
	// env of the connection a message arrived on, never a field of it.
	network := actor.NewMemNetwork()
	quiet := actor.WithLogger(zerolog.Nop())
	server, _ := actor.NewEnv("driver", nil, quiet, actor.WithTransport(network.Transport("driver", 7077)))
	first, _ := actor.NewEnv("first", nil, quiet, actor.WithTransport(network.ClientTransport()))
	second, _ := actor.NewEnv("second", nil, quiet, actor.WithTransport(network.ClientTransport()))
	defer server.Shutdown(context.Background())
	defer first.Shutdown(context.Background())
	defer second.Shutdown(context.Background())

	o := &owner{done: make(chan struct{})}
	_, _ = server.RegisterEndpoint("owner", o)
	ctx := context.Background()
	fromFirst, _ := first.SetupEndpointRef(ctx, server.Address(), "owner")
	fromSecond, _ := second.SetupEndpointRef(ctx, server.Address(), "owner")

	_ = fromFirst.Send(wrapperspb.String("claim"))
	_ = fromSecond.Send(wrapperspb.Int64(1))
	_ = fromFirst.Send(wrapperspb.Int64(2))
	<-o.done
	// Output:
	// order 1 refused: not from the owner's env
	// order 2 taken
}

// FitText makes an error's text one a message can carry: valid UTF-8, and
// cut to a byte budget with a marker that says so.
func ExampleFitText() {
	fmt.Println(actor.FitText("bad record: \xff", 100))
	fmt.Println(actor.FitText(strings.Repeat("x", 200), 80))
	// Output:
	// bad record: � [invalid UTF-8 replaced]
	// xxxxxxxxxxxxxxxxxxxx [truncated to fit spark.rpc.message.maxSize; was 200 bytes]
}
