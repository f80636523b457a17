package netty_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// BenchmarkFileServer downloads a 64 MiB file from a server env to a
// client-mode env over loopback TCP (OpenChannel, io.Copy to io.Discard),
// for a few chunk sizes, beside its baseline in the same run: io.Copy of
// the same file from disk (the page cache, after the first run). Compare
// their MB/s.
func BenchmarkFileServer(b *testing.B) {
	const size = 64 << 20
	path := filepath.Join(b.TempDir(), "data")
	writeRandom(b, path, size, 1)
	b.Run("disk", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if n, err := io.Copy(io.Discard, f); err != nil || n != size {
				b.Fatalf("copied %d bytes: %v", n, err)
			}
			f.Close()
		}
	})
	for _, chunk := range []string{"64k", "256k", "1m"} {
		b.Run("tcp/chunk="+chunk, func(b *testing.B) {
			conf := func() *actor.Conf { return actor.NewConf().Set(actor.KeyFileServerChunkSize, chunk) }
			server, client := newEnv(b, "server", conf()), newClientEnv(b, "client", conf())
			uri, err := server.FileServer().AddFile(path)
			if err != nil {
				b.Fatal(err)
			}
			ctx := testutil.Context(b, 10*waitFor)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				rc, err := client.OpenChannel(ctx, uri)
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, rc); err != nil || n != size {
					b.Fatalf("copied %d bytes: %v", n, err)
				}
				rc.Close()
			}
		})
	}
}
