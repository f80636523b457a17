// The file server's sentinel errors and FileError, a failed download of a spark:// file URI.

package actor

import (
	"errors"

	"github.com/sparkrpc/sparkrpc/messages"
)

// Sentinel errors of the file server (FileServer, OpenChannel, FetchFile).
// Each is matched with errors.Is; the downloads wrap them in a *FileError
// that names the URI.
var (
	// ErrNoFileServer is returned by FileServer's Add methods on an env that
	// does not listen (a local env, or one in client mode): nobody could
	// reach what it served, as in Spark, whose client-mode envs serve no
	// files.
	ErrNoFileServer = errors.New("env serves no files: it does not listen")
	// ErrReservedURI is returned by AddDirectory for the base URIs "/files"
	// and "/jars", which AddFile and AddJar use.
	//lint:ignore ST1005 Spark's text (IllegalArgumentException).
	ErrReservedURI = errors.New("Directory URI cannot be /files nor /jars")
	// ErrAlreadyRegistered is returned by AddFile and AddJar for a name
	// already served from another path, and by AddDirectory for a base URI
	// already served (also when written another way: "/dir1/././").
	ErrAlreadyRegistered = errors.New("already registered")
	// ErrInvalidFileURI matches a URI that is not a spark://host:port/...
	// file URI, a base URI that is not "/NAME", and a request the server
	// found malformed.
	ErrInvalidFileURI = errors.New("invalid file URI")
	// ErrFileNotFound matches a download of a URI under which nothing is
	// served, and RemoveFile or RemoveJar of a name that was not added.
	ErrFileNotFound = errors.New("file not found")
	// ErrPathRefused matches a download whose path leaves its directory:
	// "..", an absolute path, or a symbolic link that points out of the
	// directory.
	ErrPathRefused = errors.New("path leaves its directory")
	// ErrTooManyStreams matches a download the server refused because it
	// holds as many open streams as it allows for the peer
	// (spark.rpc.fileServer.maxStreamsPerPeer) or in total
	// (spark.rpc.fileServer.maxStreams). The FileError's detail names the
	// key.
	ErrTooManyStreams = errors.New("too many open file streams")
	// ErrFileChanged matches a download of a file that changed (its size or
	// modification time) while it was served: the bytes read so far may
	// belong to two versions of it.
	ErrFileChanged = errors.New("file changed while it was served")
	// ErrStreamClosed matches a read of a stream that is gone: closed with
	// Close, or closed by the server because it stayed idle past
	// spark.rpc.fileServer.streamTimeout or its env stopped.
	ErrStreamClosed = errors.New("file stream closed")
	// ErrStreamFailed matches a download that failed on the server (it
	// could not read the file) or that got a malformed reply.
	ErrStreamFailed = errors.New("file stream failed")
	// ErrFileExists is returned by FetchFile when the target file exists
	// with other contents and spark.files.overwrite is false.
	ErrFileExists = errors.New("file exists and does not match the download")
)

// FileError is a failed download of a file URI (OpenChannel, a Read of
// the stream it returns, FetchFile), as fs.PathError is a failed file
// operation. Err is one of the sentinels above, or the cause from below
// (a connect error, an *RpcTimeoutError, a *ConnectionClosedError,
// ErrEnvStopped, ctx's cause), so errors.Is and errors.As see through it.
type FileError struct {
	// Op is what failed: "open", "read" or "fetch".
	Op string
	// URI is the file's spark:// URI.
	URI string
	// Err is why.
	Err error
	// Detail is what the server or the check said, when it says more than
	// Err.
	Detail string
}

func (e *FileError) Error() string {
	s := e.Op + " " + e.URI + ": " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// statusError returns the sentinel a FileStatus other than OK stands for.
func statusError(s messages.FileStatus) error {
	switch s {
	case messages.FileStatus_FILE_STATUS_NOT_FOUND:
		return ErrFileNotFound
	case messages.FileStatus_FILE_STATUS_REFUSED:
		return ErrPathRefused
	case messages.FileStatus_FILE_STATUS_TOO_MANY_STREAMS:
		return ErrTooManyStreams
	case messages.FileStatus_FILE_STATUS_CHANGED:
		return ErrFileChanged
	case messages.FileStatus_FILE_STATUS_STREAM_UNKNOWN:
		return ErrStreamClosed
	case messages.FileStatus_FILE_STATUS_INVALID:
		return ErrInvalidFileURI
	}
	return ErrStreamFailed
}

// DirectoryURIError is a base URI that AddDirectory refuses.
type DirectoryURIError struct {
	// URI is the base URI as given.
	URI string
	// Err is ErrInvalidFileURI, ErrReservedURI or ErrAlreadyRegistered.
	Err error
	// Why says more, when Err does not say it all.
	Why string
}

func (e *DirectoryURIError) Error() string {
	s := "directory URI " + e.URI + ": " + e.Err.Error()
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

// Unwrap returns Err.
func (e *DirectoryURIError) Unwrap() error { return e.Err }
