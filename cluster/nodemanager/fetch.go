package nodemanager

// This file holds how a node manager reads a staged resource from the
// resource manager: in chunks, a few asks in flight, written in order.

import (
	"context"
	"io"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// fetchWindow is how many chunks of a resource may be on their way from
// the resource manager at once: the memory a fetch takes is fetchWindow
// chunks, whatever the resource's size.
const fetchWindow = 4

// fetchResource writes the first res.Size bytes of appID's staged
// resource res to w, read from the resource manager in chunks of
// nm.chunk bytes (RmFetchResource); it stops early when the staged file is
// shorter. A chunk shorter than asked (a resource manager with smaller
// chunks) is followed by asks for the rest of its range; only an empty one
// ends the file.
func (nm *NodeManager) fetchResource(ctx context.Context, appID string, res *messages.RmLocalResource, w io.Writer) error {
	type asked struct {
		f              *actor.Future
		offset, length int64
	}
	var queue []asked
	size, next := res.GetSize(), int64(0)
	fetch := func(off, n int64) *actor.Future {
		return nm.rm.Ask(ctx, &messages.RmFetchResource{AppId: appID, Name: res.GetName(), Offset: off, Length: int32(n)})
	}
	ask := func() {
		n := min(int64(nm.chunk), size-next)
		queue = append(queue, asked{f: fetch(next, n), offset: next, length: n})
		next += n
	}
	for next < size && len(queue) < fetchWindow {
		ask()
	}
	for len(queue) > 0 {
		head := queue[0]
		queue = queue[1:]
		r, err := actor.ResultAs[*messages.RmResourceChunk](head.f)
		if err != nil {
			return err
		}
		data := r.GetData()
		for off, end := head.offset, head.offset+head.length; ; {
			if len(data) == 0 {
				return nil // the staged file is shorter than stated
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
			if off += int64(len(data)); off >= end {
				break
			}
			r, err := actor.ResultAs[*messages.RmResourceChunk](fetch(off, end-off))
			if err != nil {
				return err
			}
			data = r.GetData()
		}
		if next < size {
			ask()
		}
	}
	return nil
}
