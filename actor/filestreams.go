// The file-server endpoint: the streams of chunks that downloads read, their limits and their lifetime.

package actor

import (
	"cmp"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"
)

// FileServerName is the name of the endpoint that serves an env's files
// (see FileServer). It is registered when the first file, jar or directory
// is added.
const FileServerName = "file-server"

// fileServerThreads is the file-server endpoint's loop: a few goroutines,
// so that a slow disk read holds up neither the shared loop nor every other
// download.
const fileServerThreads = 4

// fileStreams is the file-server endpoint. It answers OpenStream with a
// file's first chunk and, for a file larger than a chunk, a stream: the
// file opened once, whose later chunks ReadChunk asks for. A stream
// belongs to the peer that opened it (its identity as the transport
// established it): no other peer can read or close it. It is closed when
// its last chunk has been served, on CloseStream, when its peer
// disconnects, when no chunk was asked of it for the stream timeout, and
// when the endpoint stops.
type fileStreams struct {
	Router
	fs   *FileServer
	conf fileConf

	mu      sync.Mutex
	streams map[streamKey]*fileStream
	perPeer map[string]int
}

// streamKey finds a stream: its peer's identity ("" for a local
// downloader) and its id.
type streamKey struct {
	peer string
	id   uint64
}

// fileStream is one open stream. f, size, mod, chunk, chunks and addr do
// not change once it is in the table; the rest is guarded by
// fileStreams.mu.
type fileStream struct {
	f         *os.File
	closeOnce sync.Once
	size      int64
	mod       time.Time
	chunk     int64
	chunks    int64 // chunk 0 included
	addr      RpcAddress

	served int64 // chunks served, chunk 0 included
	used   time.Time
	// failed, when not 0, is the status of a chunk that failed: the file
	// is closed, and every later ReadChunk gets that status too (chunks are
	// read concurrently, so a chunk before the one that failed may be
	// asked after it), until the downloader closes the stream.
	failed messages.FileStatus
	detail string
}

// sweepTick makes the endpoint close the streams that timed out.
var sweepTick = &emptypb.Empty{}

func newFileStreams(f *FileServer) *fileStreams {
	s := &fileStreams{fs: f, conf: f.conf, streams: map[streamKey]*fileStream{}, perPeer: map[string]int{}}
	HandleAsk(&s.Router, s.open)
	HandleAsk(&s.Router, s.read)
	HandleAsk(&s.Router, s.close)
	return s
}

// ThreadCount gives the endpoint a loop of its own (Isolated).
func (s *fileStreams) ThreadCount() int { return fileServerThreads }

// Accepts takes from other envs the three requests, nothing else.
func (s *fileStreams) Accepts(name protoreflect.FullName) bool { return s.Router.Handles(name) }

// OnStart starts the sweep of streams that timed out.
func (s *fileStreams) OnStart(ctx *Context) error {
	_, err := ctx.SendEvery(max(s.conf.streamTimeout/4, time.Millisecond), sweepTick)
	return err
}

// Receive handles the sweep; the Router has no one-way message.
func (s *fileStreams) Receive(ctx *Context, msg proto.Message) error {
	if msg == sweepTick {
		s.sweep(time.Now())
		return nil
	}
	return s.Router.Receive(ctx, msg)
}

// OnDisconnected closes the streams of the peer at addr.
func (s *fileStreams) OnDisconnected(_ *Context, addr RpcAddress) error {
	s.closeWhere(func(_ streamKey, st *fileStream) bool { return st.addr == addr })
	return nil
}

// minPeerChunk is the smallest chunk a downloader can make the server
// send (smaller asks get chunks of this size, or the server's own when it
// is smaller).
const minPeerChunk = 4 << 10

// OnStop closes every stream.
func (s *fileStreams) OnStop(*Context) error {
	s.closeWhere(func(streamKey, *fileStream) bool { return true })
	return nil
}

// open answers OpenStream: the file's first chunk and, when more follow, a
// stream.
func (s *fileStreams) open(cc *CallContext, m *messages.OpenStream) (*messages.OpenStreamResponse, error) {
	kind, rest, err := splitFilePath(m.GetPath())
	if err != nil || m.GetMaxChunkSize() <= 0 {
		return openFailure(messages.FileStatus_FILE_STATUS_INVALID, "malformed request"), nil
	}
	f, status, detail := s.openFile(kind, rest)
	if status != messages.FileStatus_FILE_STATUS_OK {
		return openFailure(status, detail), nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return openFailure(messages.FileStatus_FILE_STATUS_NOT_FOUND, "not a regular file"), nil
	}
	// A downloader may ask for smaller chunks than the server's, but not
	// for chunks so small that the server does a read per few bytes.
	chunk := max(min(s.conf.chunkSize, minPeerChunk), min(s.conf.chunkSize, int64(m.GetMaxChunkSize())))
	st := &fileStream{f: f, size: fi.Size(), mod: fi.ModTime(), chunk: chunk, chunks: max(1, (fi.Size()+chunk-1)/chunk),
		served: 1, addr: cc.SenderAddress(), used: time.Now()}
	var id uint64
	if st.chunks > 1 {
		var refused string
		if id, refused = s.add(cc.SenderIdentity(), st); refused != "" {
			_ = f.Close()
			return openFailure(messages.FileStatus_FILE_STATUS_TOO_MANY_STREAMS, refused), nil
		}
	}
	data, status, detail := st.readChunk(0)
	if id == 0 || status != messages.FileStatus_FILE_STATUS_OK {
		s.remove(streamKey{cc.SenderIdentity(), id}, st)
	}
	if status != messages.FileStatus_FILE_STATUS_OK {
		return openFailure(status, detail), nil
	}
	return &messages.OpenStreamResponse{Status: status, StreamId: id, Size: st.size, ChunkSize: int32(chunk), Data: data}, nil
}

func openFailure(status messages.FileStatus, detail string) *messages.OpenStreamResponse {
	return &messages.OpenStreamResponse{Status: status, Detail: detail}
}

// openFile opens what is served under kind and rest: a file added by name,
// or a file in an added directory, through os.Root.
func (s *fileStreams) openFile(kind, rest string) (*os.File, messages.FileStatus, string) {
	path, dir, ok := s.fs.lookup(kind, rest)
	if !ok {
		return nil, messages.FileStatus_FILE_STATUS_NOT_FOUND, ""
	}
	if dir == "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, messages.FileStatus_FILE_STATUS_NOT_FOUND, "cannot open the file"
		}
		return f, messages.FileStatus_FILE_STATUS_OK, ""
	}
	if !filepath.IsLocal(rest) {
		return nil, messages.FileStatus_FILE_STATUS_REFUSED, "not a relative path inside the directory"
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, messages.FileStatus_FILE_STATUS_NOT_FOUND, "the directory is gone"
	}
	defer root.Close()
	// Stat first, following links inside the root: Open of a FIFO or a
	// device would block or do worse.
	fi, err := root.Stat(rest)
	if err == nil && !fi.Mode().IsRegular() {
		return nil, messages.FileStatus_FILE_STATUS_NOT_FOUND, "not a regular file"
	}
	var f *os.File
	if err == nil {
		f, err = root.Open(rest)
	}
	switch {
	case err == nil:
		return f, messages.FileStatus_FILE_STATUS_OK, ""
	case errors.Is(err, fs.ErrNotExist):
		return nil, messages.FileStatus_FILE_STATUS_NOT_FOUND, ""
	}
	// The root refuses what leaves it ("path escapes from parent"); say
	// why without the server's own paths.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return nil, messages.FileStatus_FILE_STATUS_REFUSED, err.Error()
}

// read answers ReadChunk.
func (s *fileStreams) read(cc *CallContext, m *messages.ReadChunk) (*messages.ReadChunkResponse, error) {
	key := streamKey{cc.SenderIdentity(), m.GetStreamId()}
	s.mu.Lock()
	st := s.streams[key]
	var failed messages.FileStatus
	var detail string
	if st != nil {
		st.used = time.Now()
		failed, detail = st.failed, st.detail
	}
	s.mu.Unlock()
	switch {
	case st == nil:
		return &messages.ReadChunkResponse{Status: messages.FileStatus_FILE_STATUS_STREAM_UNKNOWN}, nil
	case failed != messages.FileStatus_FILE_STATUS_UNSPECIFIED:
		return &messages.ReadChunkResponse{Status: failed, Detail: detail}, nil
	case m.GetIndex() < 1 || m.GetIndex() >= st.chunks:
		return &messages.ReadChunkResponse{Status: messages.FileStatus_FILE_STATUS_INVALID, Detail: "chunk index out of range"}, nil
	}
	data, status, detail := st.readChunk(m.GetIndex())
	s.mu.Lock()
	st.served++
	done := st.served >= st.chunks && status == messages.FileStatus_FILE_STATUS_OK
	if status != messages.FileStatus_FILE_STATUS_OK && st.failed == messages.FileStatus_FILE_STATUS_UNSPECIFIED {
		st.failed, st.detail = status, detail
	}
	status, detail = cmp.Or(st.failed, status), cmp.Or(st.detail, detail)
	s.mu.Unlock()
	switch {
	case done:
		s.remove(key, st)
	case status != messages.FileStatus_FILE_STATUS_OK:
		st.closeFile()
		data = nil
	}
	return &messages.ReadChunkResponse{Status: status, Detail: detail, Data: data}, nil
}

// close answers CloseStream.
func (s *fileStreams) close(cc *CallContext, m *messages.CloseStream) (*messages.CloseStreamResponse, error) {
	key := streamKey{cc.SenderIdentity(), m.GetStreamId()}
	s.mu.Lock()
	st := s.streams[key]
	s.mu.Unlock()
	if st == nil || !s.remove(key, st) {
		return &messages.CloseStreamResponse{Status: messages.FileStatus_FILE_STATUS_STREAM_UNKNOWN}, nil
	}
	return &messages.CloseStreamResponse{Status: messages.FileStatus_FILE_STATUS_OK}, nil
}

// readChunk reads chunk i of the file, and checks that the file has not
// changed since the stream opened it.
func (st *fileStream) readChunk(i int64) ([]byte, messages.FileStatus, string) {
	off := i * st.chunk
	data := make([]byte, min(st.chunk, st.size-off))
	n, err := st.f.ReadAt(data, off)
	switch {
	case n == len(data):
	case errors.Is(err, io.EOF):
		return nil, messages.FileStatus_FILE_STATUS_CHANGED, "the file became shorter"
	case errors.Is(err, os.ErrClosed):
		return nil, messages.FileStatus_FILE_STATUS_STREAM_UNKNOWN, ""
	default:
		return nil, messages.FileStatus_FILE_STATUS_READ_ERROR, "cannot read the file"
	}
	fi, err := st.f.Stat()
	if err != nil {
		return nil, messages.FileStatus_FILE_STATUS_STREAM_UNKNOWN, ""
	}
	if fi.Size() != st.size || !fi.ModTime().Equal(st.mod) {
		return nil, messages.FileStatus_FILE_STATUS_CHANGED, "its size or modification time changed"
	}
	return data, messages.FileStatus_FILE_STATUS_OK, ""
}

// add registers st for peer under a fresh id, within the limits; it
// returns why it refused, naming the key, when it did.
func (s *fileStreams) add(peer string, st *fileStream) (id uint64, refused string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.streams) >= s.conf.maxStreams:
		return 0, "the server holds " + KeyFileServerMaxStreams + " streams"
	case s.perPeer[peer] >= s.conf.maxStreamsPerPeer:
		return 0, "this peer holds " + KeyFileServerMaxStreamsPerPeer + " streams"
	}
	for id == 0 || s.streams[streamKey{peer, id}] != nil {
		id = rand.Uint64()
	}
	s.streams[streamKey{peer, id}] = st
	s.perPeer[peer]++
	return id, ""
}

// remove closes st, unless it was closed already, and takes it out of the
// table when key holds it; it reports whether it closed it.
func (s *fileStreams) remove(key streamKey, st *fileStream) bool {
	s.mu.Lock()
	held := s.streams[key] == st
	if held {
		delete(s.streams, key)
		if s.perPeer[key.peer]--; s.perPeer[key.peer] == 0 {
			delete(s.perPeer, key.peer)
		}
	}
	s.mu.Unlock()
	if held || key.id == 0 {
		st.closeFile()
	}
	return held
}

// closeFile closes the stream's file, once.
func (st *fileStream) closeFile() { st.closeOnce.Do(func() { _ = st.f.Close() }) }

// closeWhere closes the streams that match.
func (s *fileStreams) closeWhere(match func(streamKey, *fileStream) bool) {
	type victim struct {
		key streamKey
		st  *fileStream
	}
	var victims []victim
	s.mu.Lock()
	for k, st := range s.streams {
		if match(k, st) {
			victims = append(victims, victim{k, st})
		}
	}
	s.mu.Unlock()
	for _, v := range victims {
		s.remove(v.key, v.st)
	}
}

// sweep closes the streams no chunk was asked of for the stream timeout.
func (s *fileStreams) sweep(now time.Time) {
	s.closeWhere(func(_ streamKey, st *fileStream) bool { return now.Sub(st.used) >= s.conf.streamTimeout })
}

// count returns the number of open streams.
func (s *fileStreams) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}
