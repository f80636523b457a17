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
// shorter.
func (nm *NodeManager) fetchResource(ctx context.Context, appID string, res *messages.RmLocalResource, w io.Writer) error {
	type asked struct {
		f      *actor.Future
		length int64
	}
	var queue []asked
	size, next := res.GetSize(), int64(0)
	ask := func() {
		n := min(int64(nm.chunk), size-next)
		queue = append(queue, asked{f: nm.rm.Ask(ctx, &messages.RmFetchResource{AppId: appID, Name: res.GetName(), Offset: next, Length: int32(n)}), length: n})
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
		if _, err := w.Write(data); err != nil {
			return err
		}
		if int64(len(data)) < head.length {
			return nil // the staged file is shorter than stated
		}
		if next < size {
			ask()
		}
	}
	return nil
}
