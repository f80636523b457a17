package netty_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// writeRandom writes a file of size pseudo-random bytes (seeded by seed)
// at path, a block at a time, and returns its SHA-256.
func writeRandom(t testing.TB, path string, size int64, seed uint64) [sha256.Size]byte {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	src := mathrand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	block := make([]byte, 1<<20)
	for left := size; left > 0; left -= int64(len(block)) {
		b := block[:min(int64(len(block)), left)]
		_, _ = src.Read(b)
		h.Write(b)
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// writeText writes a random text, as Spark's test writes a UUID, at path.
func writeText(t testing.TB, path string) {
	t.Helper()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, path string) string {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// adder returns a function that takes the results of a FileServer's Add
// method and returns the URI, failing the test on an error.
func adder(t testing.TB) func(uri string, err error) string {
	return func(uri string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return uri
	}
}

// sameFile fails the test unless the files at a and b hold the same bytes.
func sameFile(t testing.TB, a, b string) {
	t.Helper()
	ba, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ba, bb) {
		t.Fatalf("%s and %s differ", a, b)
	}
}

// fileError returns err as a *FileError for uri, matching want.
func fileError(t testing.TB, err error, uri string, want error) *actor.FileError {
	t.Helper()
	var fe *actor.FileError
	if !errors.As(err, &fe) || !errors.Is(err, want) {
		t.Fatalf("err = %v, want a FileError matching %v", err, want)
	}
	if fe.URI != uri || !strings.Contains(err.Error(), uri) {
		t.Fatalf("err = %v, want it to name %s", err, uri)
	}
	return fe
}

// RpcEnvSuite's "file server" (case 34): files, a name with a space, an
// empty file, a jar and two directories fetched through their URIs with
// the same contents; /files and /jars refused as directories; equivalent
// base URIs refused; what does not exist fails. Run with
// spark.authenticate off and on.
func TestFileServerSparkSuite(t *testing.T) {
	for _, tc := range []struct {
		name string
		conf func() *actor.Conf
	}{
		{"plain", actor.NewConf},
		{"authenticated", func() *actor.Conf { return authConf("file server secret") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := newEnv(t, "server", tc.conf())
			client := newClientEnv(t, "client", tc.conf())
			fetchSparkSuiteFiles(t, server, client)
		})
	}
}

func fetchSparkSuiteFiles(t *testing.T, server, client *actor.Env) {
	tempDir, destDir := t.TempDir(), t.TempDir()
	file, special, empty, jar := filepath.Join(tempDir, "file"), filepath.Join(tempDir, "file name"),
		filepath.Join(tempDir, "empty"), filepath.Join(tempDir, "jar")
	for _, p := range []string{file, special, jar} {
		writeText(t, p)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir1, dir2 := mkdir(t, filepath.Join(tempDir, "dir1")), mkdir(t, filepath.Join(tempDir, "dir2"))
	sub1, sub2 := filepath.Join(dir1, "file1"), filepath.Join(dir2, "file2")
	writeText(t, sub1)
	writeText(t, sub2)

	fs, must := server.FileServer(), adder(t)
	fileURI := must(fs.AddFile(file))
	specialURI := must(fs.AddFile(special))
	emptyURI := must(fs.AddFile(empty))
	jarURI := must(fs.AddJar(jar))
	dir1URI := must(fs.AddDirectory("/dir1", dir1))
	dir2URI := must(fs.AddDirectory("/dir2", dir2))
	if want := server.Address().SparkURL() + "/files/file%20name"; specialURI != want {
		t.Errorf("URI of %q = %s, want %s", special, specialURI, want)
	}
	for _, uri := range []string{"/files", "/jars"} {
		if _, err := fs.AddDirectory(uri, filepath.Join(tempDir, "dir3")); !errors.Is(err, actor.ErrReservedURI) {
			t.Errorf("AddDirectory(%s) = %v, want ErrReservedURI", uri, err)
		}
	}
	for _, uri := range []string{"/dir1/././", "/dir2/../dir2/"} {
		if _, err := fs.AddDirectory(uri, dir1); !errors.Is(err, actor.ErrAlreadyRegistered) {
			t.Errorf("AddDirectory(%s) = %v, want ErrAlreadyRegistered", uri, err)
		}
	}

	ctx := testutil.Context(t, waitFor)
	for _, c := range []struct{ path, uri string }{
		{file, fileURI}, {special, specialURI}, {empty, emptyURI}, {jar, jarURI},
		{sub1, dir1URI + "/file1"}, {sub2, dir2URI + "/file2"},
	} {
		got, err := client.FetchFile(ctx, c.uri, destDir)
		if err != nil {
			t.Fatalf("FetchFile(%s): %v", c.uri, err)
		}
		if want := filepath.Join(destDir, filepath.Base(c.path)); got != want {
			t.Errorf("FetchFile(%s) = %s, want %s", c.uri, got, want)
		}
		sameFile(t, c.path, got)
		if fi, err := os.Stat(got); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("fetched %s: mode %v, %v; want 0600", got, fi.Mode(), err)
		}
	}
	for _, root := range []string{"files", "jars", "dir1"} {
		uri := server.Address().SparkURL() + "/" + root + "/doesNotExist"
		_, err := client.FetchFile(ctx, uri, destDir)
		fileError(t, err, uri, actor.ErrFileNotFound)
	}
	if left, _ := filepath.Glob(filepath.Join(destDir, "fetchFileTemp*")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// Rules of the file server's table that Spark's suite does not cover.
func TestFileServerTable(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newClientEnv(t, "client", nil)
	dir := t.TempDir()
	a := filepath.Join(mkdir(t, filepath.Join(dir, "a")), "same")
	b := filepath.Join(mkdir(t, filepath.Join(dir, "b")), "same")
	writeText(t, a)
	writeText(t, b)
	fs, must := server.FileServer(), adder(t)
	uri := must(fs.AddFile(a))
	if again, err := fs.AddFile(a); err != nil || again != uri {
		t.Errorf("AddFile of the same path again = %s, %v; want %s", again, err, uri)
	}
	if _, err := fs.AddFile(b); !errors.Is(err, actor.ErrAlreadyRegistered) {
		t.Errorf("AddFile of another file of the same name = %v, want ErrAlreadyRegistered", err)
	}
	if _, err := fs.AddJar(b); err != nil {
		t.Errorf("AddJar of a name served as a file: %v", err)
	}
	if _, err := fs.AddFile(dir); err == nil {
		t.Error("AddFile of a directory succeeded")
	}
	if _, err := fs.AddDirectory("/d", a); err == nil {
		t.Error("AddDirectory of a file succeeded")
	}
	for _, base := range []string{"/", "", "/a/b", "/a b", "spark://h:1/x", "/x?y"} {
		if _, err := fs.AddDirectory(base, dir); !errors.Is(err, actor.ErrInvalidFileURI) {
			t.Errorf("AddDirectory(%q) = %v, want ErrInvalidFileURI", base, err)
		}
	}
	if err := fs.RemoveFile("same"); err != nil {
		t.Fatal(err)
	}
	if err := fs.RemoveFile("same"); !errors.Is(err, actor.ErrFileNotFound) {
		t.Errorf("RemoveFile twice = %v, want ErrFileNotFound", err)
	}
	_, err := client.OpenChannel(testutil.Context(t, waitFor), uri)
	fileError(t, err, uri, actor.ErrFileNotFound)
	if err := fs.RemoveJar("same"); err != nil {
		t.Error(err)
	}
	if _, err := client.FileServer().AddFile(a); !errors.Is(err, actor.ErrNoFileServer) {
		t.Errorf("AddFile on a client-mode env = %v, want ErrNoFileServer", err)
	}
}

// Malformed URIs, an env that serves nothing and one that cannot be
// reached fail with errors that say so.
func TestFileServerErrors(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newClientEnv(t, "client", actor.NewConf().Set(netty.KeyConnectBackoff, "0"))
	ctx := testutil.Context(t, waitFor)
	host := server.Address().HostPort()
	for _, uri := range []string{"http://" + host + "/files/x", "spark://" + host, "spark://" + host + "/files",
		"spark://" + host + "/files/", "spark://name@" + host + "/files/x", "spark://" + host + "/files/x?y",
		"spark://" + host + "/files/x#y", "spark://127.0.0.1/files/x", "spark://" + host + "//x", "not a uri\x7f"} {
		_, err := client.OpenChannel(ctx, uri)
		fileError(t, err, uri, actor.ErrInvalidFileURI)
	}
	uri := server.Address().SparkURL() + "/files/x"
	_, err := client.OpenChannel(ctx, uri)
	if fe := fileError(t, err, uri, actor.ErrFileNotFound); !strings.Contains(fe.Detail, host) {
		t.Errorf("error of an env that serves nothing = %v, want it to name %s", err, host)
	}
	_, err = client.FetchFile(ctx, server.Address().SparkURL()+"/dir/..", t.TempDir())
	fileError(t, err, server.Address().SparkURL()+"/dir/..", actor.ErrInvalidFileURI)

	gone := newEnv(t, "gone", nil)
	goneURI := gone.Address().SparkURL() + "/files/x"
	shutdown(t, gone)
	_, err = client.OpenChannel(ctx, goneURI)
	var ce *netty.ConnectError
	var fe *actor.FileError
	if !errors.As(err, &fe) || fe.URI != goneURI || !errors.As(err, &ce) {
		t.Errorf("open of an env that is gone = %v, want a ConnectError", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = client.OpenChannel(cancelled, uri)
	fileError(t, err, uri, context.Canceled)
}

// A directory is served through os.Root: nothing outside it is reachable,
// whatever the path says.
func TestFileServerTraversal(t *testing.T) {
	server := newEnv(t, "server", nil)
	client := newClientEnv(t, "client", nil)
	top := t.TempDir()
	dir := mkdir(t, filepath.Join(top, "served"))
	writeText(t, filepath.Join(top, "secret"))
	writeText(t, filepath.Join(dir, "ok"))
	mkdir(t, filepath.Join(dir, "sub"))
	for link, target := range map[string]string{"out": "../secret", "abs": filepath.Join(top, "secret"), "in": "ok", "sub/up": "../ok"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	fs, must := server.FileServer(), adder(t)
	base := must(fs.AddDirectory("/dir1", dir))
	files := must(fs.AddFile(filepath.Join(dir, "ok")))
	ctx := testutil.Context(t, waitFor)
	for _, c := range []struct {
		uri  string
		want error
	}{
		{base + "/../secret", actor.ErrPathRefused},
		{base + "/%2e%2e/secret", actor.ErrPathRefused},
		{base + "/sub/../../secret", actor.ErrPathRefused},
		{base + "/%2E%2E%2Fsecret", actor.ErrPathRefused},
		{base + "/" + strings.TrimPrefix(filepath.Join(top, "secret"), "/"), actor.ErrFileNotFound},
		{base + "//" + strings.TrimPrefix(filepath.Join(top, "secret"), "/"), actor.ErrPathRefused},
		{base + "/%2F" + strings.TrimPrefix(filepath.Join(top, "secret"), "/"), actor.ErrPathRefused},
		{base + "/out", actor.ErrPathRefused},
		{base + "/abs", actor.ErrPathRefused},
		{base + "/sub", actor.ErrFileNotFound},
		{strings.TrimSuffix(files, "/ok") + "/..%2Fsecret", actor.ErrFileNotFound},
		{strings.TrimSuffix(files, "/ok") + "/..%2Fserved%2Fok", actor.ErrFileNotFound},
	} {
		_, err := client.OpenChannel(ctx, c.uri)
		fileError(t, err, c.uri, c.want)
	}
	for _, ok := range []string{base + "/ok", base + "/in", base + "/sub/up", base + "/sub/../ok", files} {
		rc, err := client.OpenChannel(ctx, ok)
		if err != nil {
			t.Fatalf("open %s: %v", ok, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if want, _ := os.ReadFile(filepath.Join(dir, "ok")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("read %s = %q, %v; want %q", ok, got, err, want)
		}
	}
}

// streamEnvs starts a server and a client-mode env with conf, and a file
// of size bytes served by the server; it returns the file's URI, path and
// SHA-256.
func streamEnvs(t *testing.T, conf func() *actor.Conf, size int64) (server, client *actor.Env, uri, path string, sum [sha256.Size]byte) {
	t.Helper()
	server = newEnv(t, "server", conf())
	client = newClientEnv(t, "client", conf())
	path = filepath.Join(t.TempDir(), "data")
	sum = writeRandom(t, path, size, uint64(size))
	uri, err := server.FileServer().AddFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return server, client, uri, path, sum
}

// A 64 MiB file streams through with the heap of both envs (one process
// here) growing by a few chunks, not by the file: the downloader's chunks in
// flight (4 of 256 KiB) and the transport's pooled frame buffers, about
// 4 to 6 MiB in all.
func TestFileServerBoundedMemory(t *testing.T) {
	const size = 64 << 20
	server, client, uri, _, sum := streamEnvs(t, actor.NewConf, size)
	ctx := testutil.Context(t, 4*waitFor)
	rc, err := client.OpenChannel(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	base := testutil.LiveHeap()
	h := sha256.New()
	var growth int64
	buf := make([]byte, 32<<10)
	var n int64
	for next := int64(0); ; {
		m, err := rc.Read(buf)
		h.Write(buf[:m])
		n += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read at %d: %v", n, err)
		}
		if n >= next {
			growth = max(growth, testutil.LiveHeap()-base)
			next += 4 << 20
		}
	}
	if n != size || [sha256.Size]byte(h.Sum(nil)) != sum {
		t.Fatalf("read %d bytes with another SHA-256, want %d bytes of the file", n, size)
	}
	t.Logf("64 MiB streamed: live heap grew by at most %.2f MiB (sampled every 4 MiB)", float64(growth)/(1<<20))
	if growth > 8<<20 {
		t.Errorf("live heap grew by %d bytes while streaming %d, want at most 8 MiB", growth, size)
	}
	if open := server.FileServer().OpenStreams(); open != 0 {
		t.Errorf("%d streams open on the server after a download ran to its end, want 0", open)
	}
}

// A reader whose server env shuts down mid-stream gets an error, not io.EOF.
func TestFileServerShutdownMidStream(t *testing.T) {
	server, client, uri, _, _ := streamEnvs(t, actor.NewConf, 8<<20)
	rc, err := client.OpenChannel(testutil.Context(t, waitFor), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	shutdown(t, server)
	n, err := io.Copy(io.Discard, rc)
	var fe *actor.FileError
	if err == nil || !errors.As(err, &fe) || fe.URI != uri {
		t.Fatalf("read after the server's shutdown: %d more bytes, err %v; want a FileError", n, err)
	}
	t.Logf("read after the server's shutdown: %v", err)
	if _, again := rc.Read(make([]byte, 1)); again != err {
		t.Errorf("read after the failure = %v, want the same error %v", again, err)
	}
}

// Cancelling the download's context fails its reads and frees the
// server's stream; so does Close.
func TestFileServerCancelFreesStream(t *testing.T) {
	server, client, uri, _, _ := streamEnvs(t, actor.NewConf, 8<<20)
	fs := server.FileServer()
	ctx, cancel := context.WithCancel(testutil.Context(t, waitFor))
	rc, err := client.OpenChannel(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if open := fs.OpenStreams(); open != 1 {
		t.Fatalf("%d streams open on the server mid-download, want 1", open)
	}
	cancel()
	if _, err := io.Copy(io.Discard, rc); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel = %v, want context.Canceled", err)
	}
	testutil.Eventually(t, waitFor, "the server's stream closed after cancel", func() bool { return fs.OpenStreams() == 0 })

	rc2, err := client.OpenChannel(testutil.Context(t, waitFor), uri)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc2.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	rc2.Close()
	if _, err := rc2.Read(make([]byte, 10)); !errors.Is(err, actor.ErrStreamClosed) {
		t.Errorf("read after Close = %v, want ErrStreamClosed", err)
	}
	testutil.Eventually(t, waitFor, "the server's stream closed after Close", func() bool { return fs.OpenStreams() == 0 })
}

// A peer holds at most spark.rpc.fileServer.maxStreamsPerPeer streams, and
// the server spark.rpc.fileServer.maxStreams; a file of one chunk holds
// none.
func TestFileServerStreamLimits(t *testing.T) {
	conf := func() *actor.Conf {
		return actor.NewConf().Set(actor.KeyFileServerMaxStreamsPerPeer, "2").Set(actor.KeyFileServerMaxStreams, "3")
	}
	server, a, uri, _, _ := streamEnvs(t, conf, 1<<20)
	b := newClientEnv(t, "b", conf())
	small := filepath.Join(t.TempDir(), "small")
	writeText(t, small)
	smallURI, err := server.FileServer().AddFile(small)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testutil.Context(t, waitFor)
	open := func(env *actor.Env, uri string) (io.ReadCloser, error) {
		rc, err := env.OpenChannel(ctx, uri)
		if err == nil {
			t.Cleanup(func() { rc.Close() })
		}
		return rc, err
	}
	for range 2 {
		if _, err := open(a, uri); err != nil {
			t.Fatal(err)
		}
	}
	_, err = open(a, uri)
	if fe := fileError(t, err, uri, actor.ErrTooManyStreams); !strings.Contains(fe.Detail, actor.KeyFileServerMaxStreamsPerPeer) {
		t.Errorf("refusal %v does not name %s", err, actor.KeyFileServerMaxStreamsPerPeer)
	}
	if _, err := open(a, smallURI); err != nil {
		t.Errorf("a file of one chunk past the limit: %v", err)
	}
	held, err := open(b, uri)
	if err != nil {
		t.Fatal(err)
	}
	_, err = open(b, uri)
	if fe := fileError(t, err, uri, actor.ErrTooManyStreams); !strings.Contains(fe.Detail, actor.KeyFileServerMaxStreams) {
		t.Errorf("refusal %v does not name %s", err, actor.KeyFileServerMaxStreams)
	}
	held.Close()
	testutil.EventuallyNoError(t, waitFor, "a stream once one closed", func() error {
		_, err := open(b, uri)
		return err
	})
}

// A file removed or replaced while it is served is served whole as it was
// opened; one changed in place fails the reader.
func TestFileServerFileChanges(t *testing.T) {
	const size = 8 << 20
	conf := func() *actor.Conf { return actor.NewConf().Set(actor.KeyFileServerChunkSize, "64k") }
	_, client, uri, path, sum := streamEnvs(t, conf, size)
	other := filepath.Join(filepath.Dir(path), "other")
	ctx := testutil.Context(t, waitFor)
	for _, c := range []struct {
		name   string
		change func()
		want   error // nil: the contents the file had when opened
	}{
		{"removed", func() { os.Remove(path) }, nil},
		{"replaced", func() { writeRandom(t, other, size, 7); os.Rename(other, path) }, nil},
		{"appended to", func() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("more"))
			f.Close()
		}, actor.ErrFileChanged},
	} {
		writeRandom(t, path, size, size)
		rc, err := client.OpenChannel(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		c.change()
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		switch {
		case c.want != nil:
			fileError(t, err, uri, c.want)
		case err != nil || [sha256.Size]byte(h.Sum(nil)) != sum:
			t.Errorf("file %s while served: err %v; want the contents it had when opened", c.name, err)
		}
	}
}

// A stream no chunk is asked of for spark.rpc.fileServer.streamTimeout
// is closed, and its reader then fails.
func TestFileServerIdleStreamCloses(t *testing.T) {
	conf := func() *actor.Conf { return actor.NewConf().Set(actor.KeyFileServerStreamTimeout, "100ms") }
	server, client, uri, _, _ := streamEnvs(t, conf, 4<<20)
	fs := server.FileServer()
	rc, err := client.OpenChannel(testutil.Context(t, waitFor), uri)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	testutil.Eventually(t, waitFor, "the idle stream closed", func() bool { return fs.OpenStreams() == 0 })
	if _, err := io.Copy(io.Discard, rc); !errors.Is(err, actor.ErrStreamClosed) {
		t.Errorf("read of a stream that timed out = %v, want ErrStreamClosed", err)
	}
}

// The streams of a peer that went away are closed at once.
func TestFileServerPeerGoneClosesStreams(t *testing.T) {
	server, client, uri, _, _ := streamEnvs(t, actor.NewConf, 4<<20)
	fs := server.FileServer()
	if _, err := client.OpenChannel(testutil.Context(t, waitFor), uri); err != nil {
		t.Fatal(err)
	}
	if open := fs.OpenStreams(); open != 1 {
		t.Fatalf("%d streams open, want 1", open)
	}
	shutdown(t, client)
	testutil.Eventually(t, waitFor, "the stream of a peer that went away closed", func() bool { return fs.OpenStreams() == 0 })
}
