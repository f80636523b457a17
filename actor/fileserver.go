// FileServer: what an env serves under spark:// file URIs (Spark's RpcEnvFileServer), and its configuration.

package actor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Configuration keys of the file server and of the downloads (OpenChannel,
// FetchFile).
const (
	// KeyFileServerChunkSize is the size of the chunks a file is streamed
	// in, default 256k; it is capped to leave room in
	// spark.rpc.message.maxSize, the server's and the downloader's.
	KeyFileServerChunkSize = "spark.rpc.fileServer.chunkSize"
	// KeyFileServerChunksInFlight is how many chunks a download asks for
	// ahead of its reader, default 4: its memory is this many chunks.
	KeyFileServerChunksInFlight = "spark.rpc.fileServer.chunksInFlight"
	// KeyFileServerMaxStreams caps the streams a server holds open at once,
	// default 1024; a download past it fails with ErrTooManyStreams. A file
	// that fits in one chunk holds no stream.
	KeyFileServerMaxStreams = "spark.rpc.fileServer.maxStreams"
	// KeyFileServerMaxStreamsPerPeer caps the streams one peer (one env)
	// holds open on a server, default 64.
	KeyFileServerMaxStreamsPerPeer = "spark.rpc.fileServer.maxStreamsPerPeer"
	// KeyFileServerStreamTimeout closes a stream that no chunk was asked of
	// for this long, default spark.network.timeout (120s). A stream is also
	// closed when its last chunk is served, when the downloader closes it
	// or disconnects, and when the server's env stops.
	KeyFileServerStreamTimeout = "spark.rpc.fileServer.streamTimeout"
	// KeyFilesFetchTimeout bounds each ask of a download (the open, each
	// chunk), default 60s (Spark's key for the same).
	KeyFilesFetchTimeout = "spark.files.fetchTimeout"
	// KeyFilesOverwrite lets FetchFile replace a file of the same name with
	// other contents, default false (Spark's key).
	KeyFilesOverwrite = "spark.files.overwrite"
)

// chunkReserve is what a chunk leaves free in spark.rpc.message.maxSize for
// the reply's other fields and the frame's envelope.
const chunkReserve = 64 << 10

// maxChunksInFlight bounds KeyFileServerChunksInFlight.
const maxChunksInFlight = 64

// fileConf is the file server's and the downloads' configuration, read
// once per env.
type fileConf struct {
	chunkSize         int64 // the largest chunk this env sends or takes
	window            int   // chunks a download asks for ahead
	maxStreams        int
	maxStreamsPerPeer int
	streamTimeout     time.Duration
	fetchTimeout      RpcTimeout
	overwrite         bool
}

// readFileConf reads and checks the file server's keys.
func readFileConf(c *Conf) (fileConf, error) {
	var fc fileConf
	maxSize, err := c.MaxMessageSize()
	if err != nil {
		return fc, err
	}
	chunk, err := c.GetSizeAsBytes(KeyFileServerChunkSize, "256k", 1)
	if err != nil {
		return fc, err
	}
	if chunk < minPeerChunk {
		return fc, &ConfError{Key: KeyFileServerChunkSize, Value: c.Get(KeyFileServerChunkSize, ""), Err: errors.New("must be at least 4k")}
	}
	fc.chunkSize = min(chunk, max(int64(maxSize)-chunkReserve, int64(maxSize)/2))
	ints := []struct {
		key      string
		def, max int
		dst      *int
	}{
		{KeyFileServerChunksInFlight, 4, maxChunksInFlight, &fc.window},
		{KeyFileServerMaxStreams, 1024, 1 << 30, &fc.maxStreams},
		{KeyFileServerMaxStreamsPerPeer, 64, 1 << 30, &fc.maxStreamsPerPeer},
	}
	for _, k := range ints {
		if *k.dst, err = c.GetInt(k.key, k.def); err != nil {
			return fc, err
		}
		if *k.dst < 1 || *k.dst > k.max {
			return fc, &ConfError{Key: k.key, Value: c.Get(k.key, ""), Err: fmt.Errorf("must be between 1 and %d", k.max)}
		}
	}
	network := c.Get(KeyNetworkTimeout, defaultNetworkTimeout)
	if fc.streamTimeout, err = c.GetDuration(KeyFileServerStreamTimeout, network, time.Second); err != nil {
		return fc, err
	}
	if fc.streamTimeout <= 0 {
		return fc, &ConfError{Key: KeyFileServerStreamTimeout, Value: c.Get(KeyFileServerStreamTimeout, network), Err: errors.New("must be positive")}
	}
	if fc.fetchTimeout, err = NewRpcTimeout(c, []string{KeyFilesFetchTimeout}, "60s"); err != nil {
		return fc, err
	}
	if err := fc.fetchTimeout.Validate(); err != nil {
		return fc, &ConfError{Key: KeyFilesFetchTimeout, Value: c.Get(KeyFilesFetchTimeout, ""), Err: err}
	}
	fc.overwrite, err = c.GetBool(KeyFilesOverwrite, false)
	return fc, err
}

// FileServer serves files and directories of the local file system to
// other envs under spark:// URIs: Spark's RpcEnvFileServer. Get an env's
// with Env.FileServer; download what it serves with Env.OpenChannel or
// Env.FetchFile from any env (also one in client mode). Only an env that
// listens serves files.
//
// What is added is looked up by name when it is downloaded: a file's
// bytes are read then, not when it is added. Nothing else of the file
// system is reachable. A download opens the file once and reads every
// chunk from that descriptor, so a file removed or replaced (renamed over)
// meanwhile is served whole as it was; one changed in place (its size or
// modification time) fails the download with ErrFileChanged.
//
// Its methods are safe for concurrent use.
type FileServer struct {
	env     *Env
	conf    fileConf
	confErr error

	mu    sync.RWMutex
	files map[string]string // name -> absolute path
	jars  map[string]string // name -> absolute path
	dirs  map[string]string // base URI's segment -> directory, symbolic links resolved
	// streams is the file-server endpoint, registered by the first Add.
	streams *fileStreams
}

// FileServer returns the env's file server. It serves nothing until a
// file, jar or directory is added; on an env that does not listen its Add
// methods fail with ErrNoFileServer.
func (e *Env) FileServer() *FileServer {
	e.filesOnce.Do(func() {
		f := &FileServer{env: e, files: map[string]string{}, jars: map[string]string{}, dirs: map[string]string{}}
		f.conf, f.confErr = readFileConf(e.conf)
		e.files = f
	})
	return e.files
}

// AddFile serves the regular file at path under
// spark://host:port/files/NAME, NAME being its base name (escaped in the
// URI), and returns that URI. Adding the same path again returns the same
// URI; another file of the same name is ErrAlreadyRegistered.
func (f *FileServer) AddFile(path string) (string, error) { return f.addNamed(filesSegment, path) }

// AddJar serves the regular file at path under
// spark://host:port/jars/NAME, as AddFile does under /files.
func (f *FileServer) AddJar(path string) (string, error) { return f.addNamed(jarsSegment, path) }

// AddDirectory serves the directory dir, and everything under it, under
// spark://host:port/SEGMENT/..., and returns spark://host:port/SEGMENT: the
// URI of a file in it is that and "/" and the file's path relative to dir.
// baseURI names SEGMENT: "/dir1", normalised as Spark does ("/dir1/././"
// and "/dir2/../dir1/" are "/dir1"). A base URI already served is
// ErrAlreadyRegistered; "/files" and "/jars" are ErrReservedURI (both in a
// *DirectoryURIError). Downloads see dir through os.Root: a path that leaves
// it, also by a symbolic link, is refused.
func (f *FileServer) AddDirectory(baseURI, dir string) (string, error) {
	seg, err := baseSegment(baseURI)
	if err != nil {
		return "", err
	}
	if err := f.serving(); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil {
		return "", err
	} else if !fi.IsDir() {
		return "", &fs.PathError{Op: "add directory", Path: abs, Err: errors.New("not a directory")}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, taken := f.dirs[seg]; taken {
		return "", &DirectoryURIError{URI: baseURI, Err: ErrAlreadyRegistered, Why: "it is /" + seg}
	}
	if err := f.startLocked(); err != nil {
		return "", err
	}
	f.dirs[seg] = abs
	return servedURI(f.env.info.Address, seg, ""), nil
}

// RemoveFile stops serving the file added under name; a download already
// under way goes on. A name that is not served is ErrFileNotFound.
func (f *FileServer) RemoveFile(name string) error { return f.remove(filesSegment, name) }

// RemoveJar stops serving the jar added under name, as RemoveFile does.
func (f *FileServer) RemoveJar(name string) error { return f.remove(jarsSegment, name) }

// OpenStreams returns how many streams the server holds open: downloads
// under way of files larger than one chunk.
func (f *FileServer) OpenStreams() int {
	f.mu.RLock()
	s := f.streams
	f.mu.RUnlock()
	if s == nil {
		return 0
	}
	return s.count()
}

// serving reports why f cannot serve files, if it cannot.
func (f *FileServer) serving() error {
	switch {
	case f.confErr != nil:
		return f.confErr
	case f.env.transport == nil || f.env.info.ClientMode:
		return ErrNoFileServer
	case f.env.stopped.Load():
		return ErrEnvStopped
	}
	return nil
}

// addNamed serves the file at path under /kind/NAME.
func (f *FileServer) addNamed(kind, path string) (string, error) {
	if err := f.serving(); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", &fs.PathError{Op: "add " + kind, Path: abs, Err: errors.New("not a regular file")}
	}
	name := filepath.Base(abs)
	m := f.table(kind)
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, taken := m[name]; taken && old != abs {
		return "", fmt.Errorf("%w: %s %s was already registered with a different path (old path = %s, new path = %s)",
			ErrAlreadyRegistered, kindNoun(kind), name, old, abs)
	}
	if err := f.startLocked(); err != nil {
		return "", err
	}
	m[name] = abs
	return servedURI(f.env.info.Address, kind, name), nil
}

func (f *FileServer) remove(kind, name string) error {
	m := f.table(kind)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := m[name]; !ok {
		return fmt.Errorf("%w: no %s %s", ErrFileNotFound, kindNoun(kind), name)
	}
	delete(m, name)
	return nil
}

// table returns the map of names of kind ("files" or "jars").
func (f *FileServer) table(kind string) map[string]string {
	if kind == jarsSegment {
		return f.jars
	}
	return f.files
}

func kindNoun(kind string) string {
	if kind == jarsSegment {
		return "Jar"
	}
	return "File"
}

// startLocked registers the file-server endpoint, once; f.mu is held.
func (f *FileServer) startLocked() error {
	if f.streams != nil {
		return nil
	}
	s := newFileStreams(f)
	if _, err := f.env.RegisterEndpoint(FileServerName, s); err != nil {
		return err
	}
	f.streams = s
	return nil
}

// lookup returns what is served under the first segment kind and the rest
// of a URI's path: the file's path, or the directory and the path in it.
func (f *FileServer) lookup(kind, rest string) (path, dir string, ok bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	switch kind {
	case filesSegment, jarsSegment:
		path, ok = f.table(kind)[rest]
		return path, "", ok
	}
	dir, ok = f.dirs[kind]
	return "", dir, ok
}
