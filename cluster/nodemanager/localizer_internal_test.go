package nodemanager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

const testApp = "application_1_0001"

// fakeSource serves content for every resource, each fetch held until
// release closes (nil: at once), and counts the fetches.
type fakeSource struct {
	content string
	release chan struct{}
	fetches atomic.Int32
}

func (s *fakeSource) fetch(ctx context.Context, _ string, _ *messages.RmLocalResource, w io.Writer) error {
	s.fetches.Add(1)
	if s.release != nil {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	_, err := io.WriteString(w, s.content)
	return err
}

func resourceOf(name, content string) *messages.RmLocalResource {
	sum := sha256.Sum256([]byte(content))
	return &messages.RmLocalResource{Name: name, Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE, Size: int64(len(content)), Sha256: sum[:]}
}

// waiters returns how many containers wait for res of testApp.
func (l *localizer) waiters(res *messages.RmLocalResource) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.apps[testApp].entries[hex.EncodeToString(res.GetSha256())]; e != nil {
		return e.waiters
	}
	return 0
}

// Containers of one application that start together on a node fetch each
// resource once; each gets a link to the one copy, which stays while one
// of them runs after the application ended and goes with the last.
func TestLocalizerFetchesOncePerApplicationAndDigest(t *testing.T) {
	root := t.TempDir()
	src := &fakeSource{content: "shared bytes", release: make(chan struct{})}
	l := newLocalizer(t.Context(), root, src.fetch, zerolog.Nop())
	defer l.wait()
	res := resourceOf("data.txt", src.content)
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		l.acquire(testApp)
		go func() {
			id := fmt.Sprintf("container_1_0001_01_%06d", i+1)
			_, err := l.localize(t.Context(), testApp, id, []*messages.RmLocalResource{res}, filepath.Join(root, testApp, id))
			errs <- err
		}()
	}
	testutil.Eventually(t, 10*time.Second, "every container to wait for the resource", func() bool { return l.waiters(res) == n })
	close(src.release)
	for range n {
		if err := testutil.Recv(t, errs, 10*time.Second, "a localization"); err != nil {
			t.Fatal(err)
		}
	}
	if f := src.fetches.Load(); f != 1 {
		t.Fatalf("%d fetches for %d containers", f, n)
	}
	cached := filepath.Join(root, testApp, fileCacheDir, hex.EncodeToString(res.GetSha256()))
	for i := range n {
		link := filepath.Join(root, testApp, fmt.Sprintf("container_1_0001_01_%06d", i+1), "data.txt")
		if target, err := os.Readlink(link); err != nil || target != cached {
			t.Fatalf("%s -> %q, %v", link, target, err)
		}
	}
	// A later container finds it in the cache.
	l.acquire(testApp)
	if _, err := l.localize(t.Context(), testApp, "container_1_0001_01_000099", []*messages.RmLocalResource{res}, filepath.Join(root, testApp, "late")); err != nil {
		t.Fatal(err)
	}
	if f := src.fetches.Load(); f != 1 {
		t.Fatalf("%d fetches after a later container", f)
	}
	if got := l.cachedApps(); len(got) != 1 || got[0] != testApp {
		t.Fatalf("cached applications %v", got)
	}
	l.finish(testApp)
	for range n {
		l.release(testApp)
	}
	if _, err := os.Stat(cached); err != nil {
		t.Fatalf("the cache went while a container used it: %v", err)
	}
	l.release(testApp)
	if _, err := os.Stat(filepath.Join(root, testApp, fileCacheDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the cache of an ended application stayed after its last container: %v", err)
	}
	if got := l.cachedApps(); len(got) != 0 {
		t.Fatalf("cached applications %v", got)
	}
}

// A fetch whose bytes do not match the digest fails every container that
// waited for it with a *cluster.LocalizationError naming both digests,
// leaves nothing in the cache, and the next container fetches again.
func TestLocalizerMismatchIsNotCached(t *testing.T) {
	root := t.TempDir()
	src := &fakeSource{content: "tampered"}
	l := newLocalizer(t.Context(), root, src.fetch, zerolog.Nop())
	defer l.wait()
	res := resourceOf("data.txt", "original")
	l.acquire(testApp)
	_, err := l.localize(t.Context(), testApp, "container_1_0001_01_000001", []*messages.RmLocalResource{res}, filepath.Join(root, testApp, "c1"))
	var le *cluster.LocalizationError
	var me *cluster.ResourceMismatchError
	if !errors.As(err, &le) || !errors.As(err, &me) || le.Name != "data.txt" || me.WantSHA256 != hex.EncodeToString(res.GetSha256()) {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, testApp, fileCacheDir)); len(ents) != 0 {
		t.Fatalf("the cache holds %v", ents)
	}
	src.content = "original"
	if _, err := l.localize(t.Context(), testApp, "container_1_0001_01_000002", []*messages.RmLocalResource{res}, filepath.Join(root, testApp, "c2")); err != nil {
		t.Fatal(err)
	}
	if f := src.fetches.Load(); f != 2 {
		t.Fatalf("%d fetches", f)
	}
}

// A container stopped while it waits stops waiting, and the fetch stops
// when no container wants it any more.
func TestLocalizerStopsFetchNobodyWaitsFor(t *testing.T) {
	root := t.TempDir()
	src := &fakeSource{content: "never", release: make(chan struct{})}
	l := newLocalizer(t.Context(), root, src.fetch, zerolog.Nop())
	res := resourceOf("data.txt", "never")
	l.acquire(testApp)
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 1)
	go func() {
		_, err := l.localize(ctx, testApp, "container_1_0001_01_000001", []*messages.RmLocalResource{res}, filepath.Join(root, testApp, "c1"))
		errs <- err
	}()
	testutil.Eventually(t, 10*time.Second, "the container to wait", func() bool { return l.waiters(res) == 1 })
	cancel()
	if err := testutil.Recv(t, errs, 10*time.Second, "the stopped localization"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	l.wait() // the fetch ended: it was cancelled
	l.finish(testApp)
	l.release(testApp)
	if _, err := os.Stat(filepath.Join(root, testApp, fileCacheDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the application's cache stayed: %v", err)
	}
}

// A resource that cannot be written on the node (here the cache's folder
// is a file; a full disk fails the same way) fails the container with the
// resource's name and the write's error.
func TestLocalizerWriteErrorFailsTheContainer(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, testApp), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, testApp, fileCacheDir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{content: "data"}
	l := newLocalizer(t.Context(), root, src.fetch, zerolog.Nop())
	defer l.wait()
	l.acquire(testApp)
	_, err := l.localize(t.Context(), testApp, "container_1_0001_01_000001", []*messages.RmLocalResource{resourceOf("data.txt", "data")},
		filepath.Join(root, testApp, "c1"))
	var le *cluster.LocalizationError
	if !errors.As(err, &le) || !errors.Is(err, cluster.ErrLocalization) || !strings.Contains(err.Error(), `"data.txt" (FILE)`) ||
		!strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v", err)
	}
}
