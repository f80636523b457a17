// Env.OpenChannel: a download of a spark:// file URI, read as a stream of chunks with a few asked for ahead.

package actor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sparkrpc/sparkrpc/messages"
)

// The reply types of the file server's requests: a reply of another type
// is refused undecoded.
var (
	openStreamResponseName  = (&messages.OpenStreamResponse{}).ProtoReflect().Descriptor().FullName()
	readChunkResponseName   = (&messages.ReadChunkResponse{}).ProtoReflect().Descriptor().FullName()
	closeStreamResponseName = (&messages.CloseStreamResponse{}).ProtoReflect().Descriptor().FullName()
)

// OpenChannel opens a download of uri, a file served by the env that
// listens at its host and port (Spark's RpcEnv.openChannel):
//
//	spark://host:port/files/NAME   a file added with FileServer.AddFile
//	spark://host:port/jars/NAME    a file added with AddJar
//	spark://host:port/DIR/PATH     the file at PATH in the directory added as /DIR
//
// The download goes over the connection the envs' messages use (so
// spark.authenticate and TLS cover it), as a stream of chunks of
// spark.rpc.fileServer.chunkSize, spark.rpc.fileServer.chunksInFlight of
// them asked for ahead of the reader: the reader holds that many chunks at
// most, whatever the file's size, and each ask has spark.files.fetchTimeout.
// The stream returned also implements io.WriterTo, so io.Copy writes its
// chunks without copying them.
//
// ctx bounds the whole download: once it ends, Read fails with its cause
// and the server's stream is closed; it is also how another goroutine
// stops a Read that waits (Read and Close are not safe for concurrent use,
// as with most readers). Close the stream when done; one read to its end
// needs no more from the server, but Close is still due.
//
// Every failure is a *FileError naming the URI, whose Err is
// ErrInvalidFileURI (a malformed URI), ErrFileNotFound (nothing served
// under it), ErrPathRefused (a path that leaves its directory),
// ErrTooManyStreams, ErrFileChanged (the file changed while it was served),
// ErrStreamClosed, ErrStreamFailed, or the cause from below: the error of a
// connect to an env that cannot be reached, ctx's cause, an
// *RpcTimeoutError, a *ConnectionClosedError when the server's env went
// away mid-stream, ErrEnvStopped. A stream that fails never ends with
// io.EOF: Read returns io.EOF only once it has handed out every byte of the
// file.
func (e *Env) OpenChannel(ctx context.Context, uri string) (io.ReadCloser, error) {
	u, err := parseFileURI("open", uri)
	if err != nil {
		return nil, err
	}
	fs := e.FileServer()
	if fs.confErr != nil {
		return nil, fs.confErr
	}
	r := &fileReader{uri: uri, ctx: ctx, ref: e.RemoteRef(u.addr, FileServerName), timeout: fs.conf.fetchTimeout,
		window: int64(fs.conf.window)}
	open := &messages.OpenStream{Path: u.path, MaxChunkSize: int32(fs.conf.chunkSize)}
	res, err := ResultAs[*messages.OpenStreamResponse](r.ref.ask(ctx, open, r.timeout, openStreamResponseName))
	if err != nil {
		return nil, r.failure("open", err)
	}
	if res.GetStatus() != messages.FileStatus_FILE_STATUS_OK {
		return nil, &FileError{Op: "open", URI: uri, Err: statusError(res.GetStatus()), Detail: res.GetDetail()}
	}
	r.id, r.size, r.chunk = res.GetStreamId(), res.GetSize(), int64(res.GetChunkSize())
	if r.size < 0 || r.chunk <= 0 || r.chunk > fs.conf.chunkSize || int64(len(res.GetData())) != min(r.size, r.chunk) ||
		(r.id == 0) != (r.size <= r.chunk) {
		r.sendClose()
		return nil, &FileError{Op: "open", URI: uri, Err: ErrStreamFailed, Detail: "malformed reply"}
	}
	r.chunks = max(1, (r.size+r.chunk-1)/r.chunk)
	r.buf, r.taken, r.next = res.GetData(), 1, 1
	if r.id != 0 {
		r.stopWatch = context.AfterFunc(ctx, r.sendClose)
	}
	return r, nil
}

// fileReader is the stream OpenChannel returns. Chunk 0 came with the
// open; chunks 1 and up are asked for, window of them ahead of the one
// being read, each ask a Future in pending.
type fileReader struct {
	uri     string
	ctx     context.Context
	ref     *Ref // the server's file-server endpoint
	timeout RpcTimeout
	window  int64

	id     uint64 // 0: the whole file came with the open
	size   int64
	chunk  int64
	chunks int64

	next    int64     // the next chunk to ask for
	taken   int64     // the chunks taken into buf so far
	pending []*Future // the asks of chunks taken .. next-1
	buf     []byte    // what is left of the chunk being read
	err     error     // sticky: io.EOF at the end, else a *FileError
	closed  bool

	closeOnce sync.Once
	stopWatch func() bool // stops the close on ctx's end
}

// Read implements io.Reader.
func (r *fileReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(r.buf) == 0 {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// WriteTo implements io.WriterTo: it writes every chunk to w as it comes.
func (r *fileReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		if len(r.buf) == 0 {
			if err := r.fill(); err == io.EOF {
				return n, nil
			} else if err != nil {
				return n, err
			}
		}
		m, err := w.Write(r.buf)
		n += int64(m)
		r.buf = r.buf[m:]
		if err != nil {
			return n, err
		}
	}
}

// Close ends the download: the server's stream, when it may still be open,
// is closed, and Read fails with ErrStreamClosed from now on.
func (r *fileReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.stopWatch != nil {
		r.stopWatch()
	}
	if r.id != 0 && r.next < r.chunks {
		r.sendClose()
	}
	r.pending, r.buf = nil, nil
	r.err = &FileError{Op: "read", URI: r.uri, Err: ErrStreamClosed, Detail: "Close was called"}
	return nil
}

// fill takes the next chunk into buf, once buf is empty.
func (r *fileReader) fill() error {
	for r.err == nil && len(r.buf) == 0 {
		if r.taken == r.chunks {
			r.err = io.EOF
			if r.stopWatch != nil {
				r.stopWatch()
			}
			break
		}
		for r.next < r.chunks && r.next < r.taken+r.window {
			req := &messages.ReadChunk{StreamId: r.id, Index: r.next}
			r.pending = append(r.pending, r.ref.ask(r.ctx, req, r.timeout, readChunkResponseName))
			r.next++
		}
		f := r.pending[0]
		r.pending[0] = nil
		r.pending = r.pending[1:]
		res, err := ResultAs[*messages.ReadChunkResponse](f)
		switch {
		case err != nil:
			r.fail(r.failure("read", err))
		case res.GetStatus() != messages.FileStatus_FILE_STATUS_OK:
			r.fail(&FileError{Op: "read", URI: r.uri, Err: statusError(res.GetStatus()), Detail: res.GetDetail()})
		case int64(len(res.GetData())) != min(r.chunk, r.size-r.taken*r.chunk):
			r.fail(&FileError{Op: "read", URI: r.uri, Err: ErrStreamFailed,
				Detail: fmt.Sprintf("chunk %d has %d bytes, want %d", r.taken, len(res.GetData()), min(r.chunk, r.size-r.taken*r.chunk))})
		default:
			r.buf = res.GetData()
			r.taken++
		}
	}
	return r.err
}

// fail makes err the stream's error and closes the server's stream.
func (r *fileReader) fail(err error) {
	r.err = err
	r.pending = nil
	r.sendClose()
}

// sendClose asks the server to close the stream, once, without waiting for
// the answer. It runs on ctx's end too, from another goroutine: it reads
// only what does not change after the open.
func (r *fileReader) sendClose() {
	if r.id == 0 {
		return
	}
	r.closeOnce.Do(func() {
		r.ref.ask(context.Background(), &messages.CloseStream{StreamId: r.id}, r.timeout, closeStreamResponseName)
	})
}

// failure makes err, the failure of an ask to the server, a *FileError.
// An env without a file-server endpoint serves no file; one whose endpoint
// went away mid-stream is stopping.
func (r *fileReader) failure(op string, err error) error {
	switch {
	case errors.Is(err, ErrEndpointNotFound) && op == "open":
		return &FileError{Op: op, URI: r.uri, Err: ErrFileNotFound, Detail: "no file is served at " + r.ref.Address().HostPort()}
	case errors.Is(err, ErrEndpointNotFound):
		return &FileError{Op: op, URI: r.uri, Err: ErrStreamClosed, Detail: "the file server stopped"}
	}
	return &FileError{Op: op, URI: r.uri, Err: err}
}

var _ io.WriterTo = (*fileReader)(nil)
