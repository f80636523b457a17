package netty_test

import (
	"crypto/sha256"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// transportKind builds a listening env and a client-mode env connected
// through one kind of transport.
type transportKind struct {
	name   string
	server func(t *testing.T, name string) *actor.Env
	client func(t *testing.T, name string) *actor.Env
}

func transportKinds() []transportKind {
	mem := func() transportKind {
		var n *actor.MemNetwork
		port := 0
		get := func() *actor.MemNetwork {
			if n == nil {
				n = actor.NewMemNetwork()
			}
			return n
		}
		start := func(t *testing.T, name string, tr actor.Transport) *actor.Env {
			env, err := actor.NewEnv(name, nil, actor.WithTransport(tr), actor.WithLogger(testLogger(t)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { shutdown(t, env) })
			return env
		}
		return transportKind{
			name: "mem",
			server: func(t *testing.T, name string) *actor.Env {
				port++
				return start(t, name, get().Transport("memhost", port))
			},
			client: func(t *testing.T, name string) *actor.Env { return start(t, name, get().ClientTransport()) },
		}
	}
	return []transportKind{
		mem(),
		{
			name:   "tcp",
			server: func(t *testing.T, name string) *actor.Env { return newEnv(t, name, nil) },
			client: func(t *testing.T, name string) *actor.Env { return newClientEnv(t, name, nil) },
		},
	}
}

// TestTransportContract runs the same cases over every transport.
func TestTransportContract(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, k transportKind)
	}{
		{"send", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			ep := newEcho()
			register(t, server, "sink", ep)
			ref := lookup(t, client, server.Address(), "sink")
			for i := range 100 {
				if err := ref.Send(wrapperspb.Int32(int32(i))); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 100 {
				if v := testutil.Recv(t, ep.got, waitFor, "a message").(*wrapperspb.Int32Value).GetValue(); v != int32(i) {
					t.Fatalf("got %d, want %d", v, i)
				}
			}
		}},
		{"ask", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			register(t, server, "echo", newEcho())
			ref := lookup(t, client, server.Address(), "echo")
			if s := askString(t, ref, "hello"); s != "hello" {
				t.Fatalf("got %q", s)
			}
		}},
		{"ask server to server", func(t *testing.T, k transportKind) {
			a, b := k.server(t, "a"), k.server(t, "b")
			register(t, b, "echo", newEcho())
			if s := askString(t, lookup(t, a, b.Address(), "echo"), "hello"); s != "hello" {
				t.Fatalf("got %q", s)
			}
		}},
		{"server asks client over its connection", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			reg := registrar{refs: make(chan *actor.Ref, 1)}
			register(t, server, "registrar", reg)
			mine := register(t, client, "mine", newEcho())
			if err := lookup(t, client, server.Address(), "registrar").Send(mine.Proto()); err != nil {
				t.Fatal(err)
			}
			ref := <-reg.refs
			if s := askString(t, ref, "back"); s != "back" {
				t.Fatalf("got %q", s)
			}
		}},
		{"ask unknown endpoint fails at once", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			ref := client.RemoteRef(server.Address(), "missing")
			start := time.Now()
			_, err := ref.AskSyncWithTimeout(testutil.Context(t, waitFor), str("x"), actor.RpcTimeout{Duration: time.Minute, Key: "test.timeout"})
			if !errors.Is(err, actor.ErrEndpointNotFound) || !strings.Contains(err.Error(), "Could not find missing.") {
				t.Fatalf("err = %v", err)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatal("waited for the timeout")
			}
		}},
		{"lookup of a missing endpoint", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			_, err := client.SetupEndpointRef(testutil.Context(t, waitFor), server.Address(), "nope")
			if !errors.Is(err, actor.ErrEndpointNotFound) || !strings.Contains(err.Error(), "spark://nope@"+server.Address().HostPort()) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"remote failure", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			register(t, server, "fail", failer{errors.New("Oops")})
			_, err := lookup(t, client, server.Address(), "fail").AskSync(testutil.Context(t, waitFor), str("x"))
			if err == nil || err.Error() != "Oops" {
				t.Fatalf("err = %v", err)
			}
		}},
		{"timeout names the key", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			register(t, server, "silent", silent{})
			_, err := lookup(t, client, server.Address(), "silent").AskSyncWithTimeout(testutil.Context(t, waitFor), str("x"),
				actor.RpcTimeout{Duration: 50 * time.Millisecond, Key: "spark.rpc.short.timeout"})
			if !errors.Is(err, actor.ErrTimeout) || strings.Count(err.Error(), "spark.rpc.short.timeout") != 1 {
				t.Fatalf("err = %v", err)
			}
		}},
		{"disconnect fails pending asks and is reported", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.server(t, "client")
			s := silent{asked: make(chan struct{}, 1)}
			register(t, server, "silent", s)
			evs := newEvents()
			register(t, client, "events", evs)
			ref := lookup(t, client, server.Address(), "silent")
			f := ref.AskWithTimeout(testutil.Context(t, waitFor), str("x"), actor.RpcTimeout{Duration: time.Minute, Key: "test.timeout"})
			addr := server.Address()
			evs.wait(t, "connected", &addr)
			waitAsked(t, s)
			shutdown(t, server)
			if _, err := f.Result(); !errors.Is(err, actor.ErrConnectionClosed) {
				t.Fatalf("err = %v", err)
			}
			evs.wait(t, "disconnected", &addr)
		}},
		{"own shutdown reports nothing", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.server(t, "client")
			register(t, server, "echo", newEcho())
			evs := newEvents()
			register(t, client, "events", evs)
			askString(t, lookup(t, client, server.Address(), "echo"), "x")
			shutdown(t, client)
			for _, ev := range evs.all() {
				if ev.kind == "disconnected" || ev.kind == "error" {
					t.Fatalf("got %v", ev)
				}
			}
		}},
		{"file server", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			path := filepath.Join(t.TempDir(), "data")
			sum := writeRandom(t, path, 1<<20+1, 1)
			uri, err := server.FileServer().AddFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := client.OpenChannel(testutil.Context(t, waitFor), uri)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			h := sha256.New()
			if n, err := io.Copy(h, rc); err != nil || n != 1<<20+1 || [sha256.Size]byte(h.Sum(nil)) != sum {
				t.Fatalf("download of %s: %d bytes, %v; want the file's %d", uri, n, err, 1<<20+1)
			}
		}},
		{"too large", func(t *testing.T, k transportKind) {
			server, client := k.server(t, "server"), k.client(t, "client")
			register(t, server, "echo", newEcho())
			ref := lookup(t, client, server.Address(), "echo")
			err := ref.Send(wrapperspb.Bytes(make([]byte, 129<<20)))
			if !errors.Is(err, actor.ErrMessageTooLarge) || !strings.Contains(err.Error(), "spark.rpc.message.maxSize") {
				t.Fatalf("err = %v", err)
			}
		}},
	}
	for _, k := range transportKinds() {
		t.Run(k.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, k) })
			}
		})
	}
}

var (
	_ = netty.NewTransport
	_ proto.Message
)
