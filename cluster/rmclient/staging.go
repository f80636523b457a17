package rmclient

// This file holds the staging of an application's resources: the user's
// program and --files, streamed to the resource manager's staging folder
// of a new application before its submission (YARN's Client uploading to
// its staging directory).

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// stageWindow is how many chunks of a resource may be on their way to the
// resource manager at once: the memory staging takes is stageWindow
// chunks, whatever the file's size.
const stageWindow = 4

// Resource is a local file to stage for an application, and how
// containers find it: under Name in their working folder, as a program
// (PROGRAM, mode 0700; a command's first word "sparkrpc" runs it) or a
// file (FILE, mode 0600).
type Resource struct {
	Name string
	Kind messages.RmResourceKind
	// Path is the local file.
	Path string
}

// Resources returns the resources of a submission: program (none when
// empty) as cluster.AppResourceName of kind PROGRAM, and each of files
// under its base name, of kind FILE. Two files with one base name are a
// *cluster.DuplicateResourceError; a path that is not a regular file, or a
// name that no resource may have, is an error too. It sends nothing.
func Resources(program string, files []string) ([]Resource, error) {
	var out []Resource
	paths := map[string]string{}
	add := func(name string, kind messages.RmResourceKind, path string) error {
		if err := cluster.ValidateResourceName(kind, name); err != nil {
			return fmt.Errorf("cluster: cannot stage %s: %w", path, err)
		}
		if prev, dup := paths[name]; dup {
			return &cluster.DuplicateResourceError{Name: name, Paths: []string{prev, path}}
		}
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("cluster: cannot stage %s: %w", path, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("cluster: cannot stage %s: not a regular file", path)
		}
		paths[name] = path
		out = append(out, Resource{Name: name, Kind: kind, Path: path})
		return nil
	}
	if program != "" {
		if err := add(cluster.AppResourceName, messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM, program); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if err := add(filepath.Base(f), messages.RmResourceKind_RM_RESOURCE_KIND_FILE, f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Stage streams the file res.Path to the resource manager as resource
// res.Name of application appID, which this client's user created
// (NewApplication, on this client's env) and has not submitted yet. The
// file goes in chunks of cluster.StageChunkSize bytes (256 KiB, fewer when
// the env's spark.rpc.message.maxSize needs it), each an ask, with at most
// stageWindow (4) in flight, and is hashed as it is read; a commit then
// states its size and SHA-256, which the resource manager checks. It
// returns the resource as a launch context names it
// (RmLaunchContext.resources).
func (c *Client) Stage(ctx context.Context, appID string, res Resource) (*messages.RmLocalResource, error) {
	if err := cluster.ValidateResourceName(res.Kind, res.Name); err != nil {
		return nil, err
	}
	f, err := os.Open(res.Path)
	if err != nil {
		return nil, fmt.Errorf("cluster: cannot stage %s: %w", res.Path, err)
	}
	defer f.Close()
	maxSize, err := c.env.Conf().MaxMessageSize()
	if err != nil {
		return nil, err
	}
	s := &stageStream{c: c, ctx: ctx, appID: appID, res: res, chunk: cluster.StageChunkSize(maxSize)}
	size, sum, err := s.send(f)
	if err == nil {
		lr := &messages.RmLocalResource{Name: res.Name, Kind: res.Kind, Size: size, Sha256: sum}
		if _, err = actor.AskAs[*messages.RmStageResponse](ctx, c.rm, &messages.RmStageCommit{AppId: appID, User: c.user, Resource: lr}); err == nil {
			return lr, nil
		}
	}
	// The cause first: its text is all that is left of a remote error's
	// kind (cluster.RemoteIs).
	return nil, fmt.Errorf("%w (staging %s as %q of %s)", err, res.Path, res.Name, appID)
}

// stageStream sends one resource's chunks, at most stageWindow at a time,
// each in a buffer of its own that is reused once its ask is answered.
type stageStream struct {
	c     *Client
	ctx   context.Context
	appID string
	res   Resource
	chunk int

	queue []stagedChunk // asks in flight, oldest first
	free  [][]byte      // buffers whose asks were answered
}

type stagedChunk struct {
	f   *actor.Future
	buf []byte
}

// send streams r and returns its size and SHA-256.
func (s *stageStream) send(r io.Reader) (int64, []byte, error) {
	h := sha256.New()
	var off int64
	for {
		if len(s.queue) == stageWindow {
			if err := s.waitOldest(); err != nil {
				return 0, nil, err
			}
		}
		buf := s.buffer()
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			h.Write(buf[:n])
			f := s.c.rm.Ask(s.ctx, &messages.RmStageChunk{AppId: s.appID, User: s.c.user, Name: s.res.Name, Kind: s.res.Kind,
				Offset: off, Data: buf[:n]})
			s.queue = append(s.queue, stagedChunk{f: f, buf: buf})
			off += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return 0, nil, err
		}
	}
	for len(s.queue) > 0 {
		if err := s.waitOldest(); err != nil {
			return 0, nil, err
		}
	}
	return off, h.Sum(nil), nil
}

func (s *stageStream) buffer() []byte {
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b
	}
	return make([]byte, s.chunk)
}

// waitOldest waits for the answer to the oldest chunk in flight. Its buffer
// is free again only then: the transport may still be sending it before.
func (s *stageStream) waitOldest() error {
	head := s.queue[0]
	s.queue = s.queue[1:]
	if _, err := actor.ResultAs[*messages.RmStageResponse](head.f); err != nil {
		return err
	}
	s.free = append(s.free, head.buf)
	return nil
}

// stageAll stages resources for appID, in order, and stops at the first
// that fails.
func (c *Client) stageAll(ctx context.Context, appID string, resources []Resource) ([]*messages.RmLocalResource, error) {
	out := make([]*messages.RmLocalResource, 0, len(resources))
	for _, res := range resources {
		lr, err := c.Stage(ctx, appID, res)
		if err != nil {
			return nil, fmt.Errorf("staging its resources failed: %w", err)
		}
		out = append(out, lr)
	}
	return out, nil
}
