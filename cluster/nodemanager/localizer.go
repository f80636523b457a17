package nodemanager

// This file holds the localizer (YARN's ResourceLocalizationService and
// ContainerLocalizer): the staged resources a container needs, fetched
// once per application and digest into the application's file cache,
// verified, and linked into the container's working folder.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/privatefile"
	"github.com/sparkrpc/sparkrpc/messages"
)

// fileCacheDir is the folder, in an application's folder of the node
// (Dir/apps/APP_ID), that holds its localized resources, one file per
// digest. No container id can have this name.
const fileCacheDir = "filecache"

// fetchFunc writes the content of res, staged for appID, to w: at most
// res.Size bytes, fewer when the staged file is shorter.
type fetchFunc func(ctx context.Context, appID string, res *messages.RmLocalResource, w io.Writer) error

// localizer keeps the node's localized resources: for each application,
// one file per digest, fetched once however many of its containers need
// it at once, shared by its containers on the node and removed when the
// resource manager says the application ended and none of its containers
// runs here any more.
type localizer struct {
	root string // the node's folder of applications, Dir/apps
	ctx  context.Context
	log  zerolog.Logger
	wg   sync.WaitGroup // fetches in flight

	// What was fetched, for the metrics.
	fetched, fetchedBytes atomic.Int64

	mu    sync.Mutex
	fetch fetchFunc // reads a resource from the resource manager
	apps  map[string]*appCache
}

// appCache is what the node keeps of one application's resources.
type appCache struct {
	users    int  // containers localizing or running
	fetching int  // fetches in flight
	finished bool // the resource manager said it ended
	entries  map[string]*cacheEntry
}

// cacheEntry is one resource, by hex digest: done closes once it is
// fetched (err nil, the file at path) or failed (the entry is then
// forgotten, so that the next container tries again).
type cacheEntry struct {
	done    chan struct{}
	err     error
	path    string
	waiters int
	cancel  context.CancelFunc
}

func newLocalizer(ctx context.Context, root string, fetch fetchFunc, log zerolog.Logger) *localizer {
	return &localizer{root: root, fetch: fetch, ctx: ctx, log: log, apps: make(map[string]*appCache)}
}

func (l *localizer) cacheDir(appID string) string { return filepath.Join(l.root, appID, fileCacheDir) }

// acquire counts a container of appID that uses its resources, until
// release.
func (l *localizer) acquire(appID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	app, ok := l.apps[appID]
	if !ok {
		app = &appCache{entries: make(map[string]*cacheEntry)}
		l.apps[appID] = app
	}
	app.users++
}

// release ends a use of acquire.
func (l *localizer) release(appID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if app, ok := l.apps[appID]; ok {
		app.users--
		l.removeIfDone(appID, app)
	}
}

// finish records that appID ended: its resources go once none of its
// containers uses them.
func (l *localizer) finish(appID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if app, ok := l.apps[appID]; ok {
		app.finished = true
		l.removeIfDone(appID, app)
	}
}

// removeIfDone removes app's cache once it ended and nothing uses it;
// l.mu is held.
func (l *localizer) removeIfDone(appID string, app *appCache) {
	if !app.finished || app.users > 0 || app.fetching > 0 {
		return
	}
	delete(l.apps, appID)
	if err := privatefile.RemoveAll(l.cacheDir(appID)); err != nil {
		l.log.Warn().Err(err).Str("app", appID).Msg("cannot remove the application's localized resources")
	}
	_ = os.Remove(filepath.Join(l.root, appID)) // the application's folder, once empty
	l.log.Info().Str("app", appID).Msg("removed the localized resources of an ended application")
}

// cachedApps returns the applications whose resources the node keeps.
func (l *localizer) cachedApps() []string {
	l.mu.Lock()
	ids := make([]string, 0, len(l.apps))
	for id := range l.apps {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	sort.Strings(ids)
	return ids
}

// localize makes resources, of appID's container containerID (acquired),
// appear in workDir under their names, linked to the application's cache,
// and returns the path of the program among them ("" without one). Its
// errors are *cluster.LocalizationError, or ctx's.
func (l *localizer) localize(ctx context.Context, appID, containerID string, resources []*messages.RmLocalResource, workDir string) (string, error) {
	if err := privatefile.MkdirAll(workDir); err != nil {
		return "", err
	}
	program := ""
	for _, res := range resources {
		fail := func(err error) error {
			return &cluster.LocalizationError{AppID: appID, ContainerID: containerID, Name: res.GetName(), Kind: cluster.ResourceKindName(res.GetKind()), Err: err}
		}
		path, err := l.get(ctx, appID, res)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fail(err)
		}
		link := filepath.Join(workDir, res.GetName())
		if err := os.Symlink(path, link); err != nil {
			return "", fail(err)
		}
		if res.GetKind() == messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM {
			program = link
		}
	}
	return program, nil
}

// get returns the path of res in appID's cache, fetching it unless it is
// there or on its way.
func (l *localizer) get(ctx context.Context, appID string, res *messages.RmLocalResource) (string, error) {
	if len(res.GetSha256()) != sha256.Size {
		return "", fmt.Errorf("its digest has %d bytes, not %d", len(res.GetSha256()), sha256.Size)
	}
	key := hex.EncodeToString(res.GetSha256())
	l.mu.Lock()
	app := l.apps[appID]
	e, ok := app.entries[key]
	if ok && isDone(e) && !exists(e.path) { // removed behind the node's back
		delete(app.entries, key)
		ok = false
	}
	if !ok {
		e = l.start(appID, app, key, res)
	}
	e.waiters++
	l.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
	}
	l.mu.Lock()
	e.waiters--
	if e.waiters == 0 && !isDone(e) {
		e.cancel() // nobody wants it any more
	}
	l.mu.Unlock()
	if !isDone(e) {
		return "", ctx.Err()
	}
	if e.err != nil {
		return "", e.err
	}
	if res.GetKind() == messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM {
		// One copy per digest: a program's makes it executable.
		if err := os.Chmod(e.path, 0o500); err != nil {
			return "", err
		}
	}
	return e.path, nil
}

// start starts fetching res into app's cache; l.mu is held.
func (l *localizer) start(appID string, app *appCache, key string, res *messages.RmLocalResource) *cacheEntry {
	ctx, cancel := context.WithCancel(l.ctx)
	e := &cacheEntry{done: make(chan struct{}), path: filepath.Join(l.cacheDir(appID), key), cancel: cancel}
	app.entries[key] = e
	app.fetching++
	l.wg.Add(1)
	fetch := l.fetch
	go func() {
		defer l.wg.Done()
		defer cancel()
		err := l.download(ctx, fetch, appID, res, e.path)
		l.mu.Lock()
		e.err = err
		if err != nil && app.entries[key] == e {
			delete(app.entries, key)
		}
		app.fetching--
		close(e.done)
		l.removeIfDone(appID, app)
		l.mu.Unlock()
	}()
	return e
}

// download fetches res with fetch into a new file at path (0400; 0500 for
// a program: containers share it, and none should rewrite what the next
// one runs) and checks its size and SHA-256 before it takes that name.
func (l *localizer) download(ctx context.Context, fetch fetchFunc, appID string, res *messages.RmLocalResource, path string) error {
	dir := filepath.Dir(path)
	if err := privatefile.MkdirAll(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".part-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	h := sha256.New()
	n := &countingWriter{}
	err = fetch(ctx, appID, res, io.MultiWriter(f, h, n))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if sum := h.Sum(nil); err == nil && (n.n != res.GetSize() || !bytes.Equal(sum, res.GetSha256())) {
		err = &cluster.ResourceMismatchError{Name: res.GetName(), Size: n.n, SHA256: hex.EncodeToString(sum),
			WantSize: res.GetSize(), WantSHA256: hex.EncodeToString(res.GetSha256())}
	}
	mode := os.FileMode(0o400)
	if res.GetKind() == messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM {
		mode = 0o500
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	l.fetched.Add(1)
	l.fetchedBytes.Add(n.n)
	l.log.Info().Str("app", appID).Str("resource", res.GetName()).Int64("size", n.n).Str("sha256", hex.EncodeToString(res.GetSha256())).
		Msg("localized resource")
	return nil
}

// wait waits for the fetches in flight; they end soon once l.ctx has.
func (l *localizer) wait() { l.wg.Wait() }

func isDone(e *cacheEntry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
