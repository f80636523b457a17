package actor_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// writeFile writes size bytes of a repeating pattern at dir/name and
// returns the path and the bytes.
func writeFile(t testing.TB, dir, name string, size int) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// A bad value of a file server key is a ConfError naming it, from the Add
// methods and from downloads alike.
func TestFileServerConfErrors(t *testing.T) {
	path, _ := writeFile(t, t.TempDir(), "f", 10)
	for key, value := range map[string]string{
		actor.KeyFileServerChunkSize:         "1000",
		actor.KeyFileServerChunksInFlight:    "65",
		actor.KeyFileServerMaxStreams:        "0",
		actor.KeyFileServerMaxStreamsPerPeer: "x",
		actor.KeyFileServerStreamTimeout:     "0s",
		actor.KeyFilesFetchTimeout:           "0s",
		actor.KeyFilesOverwrite:              "maybe",
	} {
		n := actor.NewMemNetwork()
		env := newEnv(t, actor.NewConf().Set(key, value), actor.WithTransport(n.Transport("h", 1)))
		var ce *actor.ConfError
		if _, err := env.FileServer().AddFile(path); !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%s=%s: AddFile = %v, want a ConfError for the key", key, value, err)
		}
		if _, err := env.OpenChannel(testutil.Context(t, testTimeout), "spark://h:2/files/f"); !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%s=%s: OpenChannel = %v, want a ConfError for the key", key, value, err)
		}
	}
}

// A download of a file of many chunks, read a few bytes at a time, from
// the env that serves it, and between envs whose chunk sizes differ.
func TestFileServerChunks(t *testing.T) {
	path, data := writeFile(t, t.TempDir(), "data", 100_003)
	n := actor.NewMemNetwork()
	server := newEnv(t, actor.NewConf().Set(actor.KeyFileServerChunkSize, "8k").Set(actor.KeyFileServerChunksInFlight, "3"),
		actor.WithTransport(n.Transport("server", 1)))
	uri, err := server.FileServer().AddFile(path)
	if err != nil {
		t.Fatal(err)
	}
	smaller := newEnv(t, actor.NewConf().Set(actor.KeyFileServerChunkSize, "4k"), actor.WithTransport(n.ClientTransport()))
	larger := newEnv(t, nil, actor.WithTransport(n.ClientTransport()))
	ctx := testutil.Context(t, testTimeout)
	for name, env := range map[string]*actor.Env{"itself": server, "smaller chunks": smaller, "larger chunks": larger} {
		rc, err := env.OpenChannel(ctx, uri)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got bytes.Buffer
		buf := make([]byte, 777)
		for {
			n, err := rc.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: read at %d: %v", name, got.Len(), err)
			}
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Errorf("%s: read %d bytes, not the file's %d", name, got.Len(), len(data))
		}
		if _, err := rc.Read(buf); err != io.EOF {
			t.Errorf("%s: read past the end = %v, want io.EOF", name, err)
		}
		rc.Close()
	}
	testutil.Eventually(t, testTimeout, "every stream closed", func() bool { return server.FileServer().OpenStreams() == 0 })
}

// An env without a transport serves nothing and downloads nothing; an
// env that stopped adds nothing.
func TestFileServerWithoutNetwork(t *testing.T) {
	path, _ := writeFile(t, t.TempDir(), "f", 10)
	local := newEnv(t, nil)
	if _, err := local.FileServer().AddFile(path); !errors.Is(err, actor.ErrNoFileServer) {
		t.Errorf("AddFile on a local env = %v, want ErrNoFileServer", err)
	}
	_, err := local.OpenChannel(testutil.Context(t, testTimeout), "spark://h:1/files/f")
	if !errors.Is(err, actor.ErrNoTransport) {
		t.Errorf("OpenChannel on a local env = %v, want ErrNoTransport", err)
	}
	stopped := newEnv(t, nil, actor.WithTransport(actor.NewMemNetwork().Transport("h", 1)))
	shutdown(t, stopped)
	if _, err := stopped.FileServer().AddFile(path); !errors.Is(err, actor.ErrEnvStopped) {
		t.Errorf("AddFile on a stopped env = %v, want ErrEnvStopped", err)
	}
}

// FetchFile keeps a file already there with the same contents, refuses one
// with other contents unless spark.files.overwrite is true, and leaves no
// temporary file behind.
func TestFetchFileExisting(t *testing.T) {
	path, data := writeFile(t, t.TempDir(), "f", 5000)
	n := actor.NewMemNetwork()
	server := newEnv(t, nil, actor.WithTransport(n.Transport("server", 1)))
	uri, err := server.FileServer().AddFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testutil.Context(t, testTimeout)
	dest := t.TempDir()
	client := newEnv(t, nil, actor.WithTransport(n.ClientTransport()))
	if _, err := client.FetchFile(ctx, uri, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := client.FetchFile(ctx, uri, dest); err != nil {
		t.Errorf("FetchFile onto the same contents: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dest, "f"), []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := client.FetchFile(ctx, uri, dest); !errors.Is(err, actor.ErrFileExists) {
		t.Errorf("FetchFile onto other contents = %v, want ErrFileExists", err)
	}
	overwriting := newEnv(t, actor.NewConf().Set(actor.KeyFilesOverwrite, "true"), actor.WithTransport(n.ClientTransport()))
	if got, err := overwriting.FetchFile(ctx, uri, dest); err != nil {
		t.Errorf("FetchFile with %s: %v", actor.KeyFilesOverwrite, err)
	} else if b, _ := os.ReadFile(got); !bytes.Equal(b, data) {
		t.Errorf("FetchFile with %s left other contents", actor.KeyFilesOverwrite)
	}
	if _, err := client.FetchFile(ctx, uri, filepath.Join(dest, "missing")); err == nil {
		t.Error("FetchFile into a folder that does not exist succeeded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := client.FetchFile(cancelled, uri, dest); !errors.Is(err, context.Canceled) {
		t.Errorf("FetchFile with a cancelled context = %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dest, "fetchFileTemp*")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// A downloader that asks for tiny chunks gets chunks of at least 4 KiB: it
// cannot make the server read and stat a file a few bytes at a time.
func TestFileServerChunkFloor(t *testing.T) {
	path, _ := writeFile(t, t.TempDir(), "data", 100_000)
	n := actor.NewMemNetwork()
	server := newEnv(t, nil, actor.WithTransport(n.Transport("server", 1)))
	if _, err := server.FileServer().AddFile(path); err != nil {
		t.Fatal(err)
	}
	client := newEnv(t, nil, actor.WithTransport(n.ClientTransport()))
	ctx := testutil.Context(t, testTimeout)
	ref, err := client.SetupEndpointRef(ctx, server.Address(), actor.FileServerName)
	if err != nil {
		t.Fatal(err)
	}
	res, err := actor.AskAs[*messages.OpenStreamResponse](ctx, ref, &messages.OpenStream{Path: "/files/data", MaxChunkSize: 1})
	if err != nil || res.GetChunkSize() != 4<<10 || len(res.GetData()) != 4<<10 {
		t.Fatalf("open with 1-byte chunks: chunk %d, %d bytes, %v", res.GetChunkSize(), len(res.GetData()), err)
	}
	_, _ = actor.AskAs[*messages.CloseStreamResponse](ctx, ref, &messages.CloseStream{StreamId: res.GetStreamId()})
}
