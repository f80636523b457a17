package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
)

// openLog opens a container log for reading with the kubelet's options: Tail (last lines),
// LimitBytes, and Follow (keeps reading until the process has ended or ctx is done). Timestamps
// and since-filters are not supported: the log has no timestamps.
func openLog(ctx context.Context, path string, exited <-chan struct{}, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	if err != nil {
		return nil, err
	}
	if opts.Tail > 0 {
		if err := seekTail(f, opts.Tail); err != nil {
			f.Close()
			return nil, err
		}
	}
	var r io.Reader = f
	if opts.Follow {
		r = &follower{ctx: ctx, f: f, exited: exited}
	}
	if opts.LimitBytes > 0 {
		r = io.LimitReader(r, int64(opts.LimitBytes))
	}
	return struct {
		io.Reader
		io.Closer
	}{r, f}, nil
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end := fi.Size()
	const chunk = 32 << 10
	buf := make([]byte, chunk)
	pos, lines := end, 0
	for pos > 0 {
		size := int64(chunk)
		if pos < size {
			size = pos
		}
		pos -= size
		if _, err := f.ReadAt(buf[:size], pos); err != nil && err != io.EOF {
			return err
		}
		for i := size - 1; i >= 0; i-- {
			if buf[i] != '\n' || pos+i == end-1 {
				continue
			}
			lines++
			if lines == n {
				_, err := f.Seek(pos+i+1, io.SeekStart)
				return err
			}
		}
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}

// follower reads a growing file until the writing process has ended.
type follower struct {
	ctx    context.Context
	f      *os.File
	exited <-chan struct{}
}

func (r *follower) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 || err != io.EOF {
			return n, err
		}
		select {
		case <-r.exited:
			// One more read: the process may have written after our last one.
			return r.f.Read(p)
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// GetContainerLogs serves the log of the pod's first container.
func (p *provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	p.mu.Lock()
	pp, ok := p.pods[podKey(namespace, podName)]
	var logPath string
	var exited chan struct{}
	if ok {
		if c := pp.pod.Spec.Containers[0].Name; c != containerName {
			p.mu.Unlock()
			return nil, errdefs.NotFoundf("container %s of pod %s/%s is not run by this node (only the first container, %s, is)", containerName, namespace, podName, c)
		}
		logPath, exited = pp.logPath, pp.exited
		if pp.proc == nil {
			logPath = "" // not started (yet)
		}
	}
	p.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s not found", namespace, podName)
	}
	if opts.Previous {
		return nil, errdefs.NotFoundf("container %s of pod %s/%s has no previous instance", containerName, namespace, podName)
	}
	if logPath == "" {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return openLog(ctx, logPath, exited, opts)
}
