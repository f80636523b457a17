package netty_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// counter counts the messages it receives and signals when it has want.
type counter struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *counter) Receive(*actor.Context, proto.Message) error {
	if c.n.Add(1) == c.want {
		close(c.done)
	}
	return nil
}

func benchEnvs(b *testing.B) (server, client *actor.Env) {
	server = newEnv(b, "server", nil)
	client = newEnv(b, "client", nil)
	return server, client
}

// BenchmarkRemoteSend measures one-way sends over loopback, until the last
// one has arrived.
func BenchmarkRemoteSend(b *testing.B) {
	for _, size := range []int{16, 1024} {
		b.Run(fmt.Sprintf("payload=%dB", size), func(b *testing.B) {
			server, client := benchEnvs(b)
			c := &counter{want: int64(b.N), done: make(chan struct{})}
			register(b, server, "sink", c)
			ref := lookup(b, client, server.Address(), "sink")
			msg := wrapperspb.Bytes(make([]byte, size))
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				err := ref.Send(msg)
				for errors.Is(err, netty.ErrQueueFull) {
					// Faster than loopback drains: the outbox is at its
					// bound (spark.rpc.io.maxQueuedBytesPerConnection).
					runtime.Gosched()
					err = ref.Send(msg)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			<-c.done
		})
	}
}

// BenchmarkRemoteAsk measures asks over loopback with 1 and 64 in flight.
func BenchmarkRemoteAsk(b *testing.B) {
	for _, inflight := range []int{1, 64} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			server, client := benchEnvs(b)
			register(b, server, "echo", newEcho())
			ref := lookup(b, client, server.Address(), "echo")
			msg := wrapperspb.Bytes(make([]byte, 16))
			ctx := context.Background()
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range inflight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if _, err := ref.AskSync(ctx, msg); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
