package rmclient

// This file holds container logs: how node managers list and serve them,
// and how a client reads them.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// ContainerLog is a log file of one of an application's containers.
type ContainerLog struct {
	// NodeID and NodeAddress name the node manager that holds the file.
	NodeID, NodeAddress string
	ContainerID         string
	// Name is the file's name in the container's log folder ("stdout").
	Name     string
	Size     int64
	Modified time.Time
}

// LogListing is what ApplicationLogs found.
type LogListing struct {
	// Logs are ordered by container id, stdout before stderr.
	Logs []ContainerLog
	// Unavailable says, for each node whose logs could not be listed (a
	// lost node, a node manager that did not answer), why.
	Unavailable []string
}

// ApplicationLogs lists the container log files of application appID on
// every node the resource manager knows (as `yarn logs -applicationId`
// does for an application whose logs are not aggregated). The error wraps
// ErrUnknownAppID when the resource manager does not know appID.
func (c *Client) ApplicationLogs(ctx context.Context, appID string) (*LogListing, error) {
	if _, err := c.Report(ctx, appID); err != nil {
		return nil, err
	}
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := &LogListing{}
	for _, n := range nodes {
		switch n.GetState() {
		case "LOST":
			out.Unavailable = append(out.Unavailable, fmt.Sprintf("node %s is lost: its logs are not available", n.GetNodeId()))
			continue
		case "SHUTDOWN":
			out.Unavailable = append(out.Unavailable, fmt.Sprintf("node %s has shut down: its logs are not available", n.GetNodeId()))
			continue
		}
		ref := c.env.RemoteRef(cluster.ParseNodeAddress(n.GetAddress()), cluster.NodeManagerEndpointName)
		r, err := actor.AskAs[*messages.NmApplicationLogs](ctx, ref, &messages.NmGetApplicationLogs{AppId: appID, User: c.user})
		if err != nil {
			out.Unavailable = append(out.Unavailable, fmt.Sprintf("node %s: cannot list the logs: %v", n.GetNodeId(), err))
			continue
		}
		for _, f := range r.GetFiles() {
			out.Logs = append(out.Logs, ContainerLog{NodeID: n.GetNodeId(), NodeAddress: n.GetAddress(), ContainerID: f.GetContainerId(),
				Name: f.GetName(), Size: f.GetSize(), Modified: time.UnixMilli(f.GetModifiedMs())})
		}
	}
	sort.SliceStable(out.Logs, func(i, j int) bool { return out.Logs[i].ContainerID < out.Logs[j].ContainerID })
	return out, nil
}

// CopyLog writes the first l.Size bytes of the log file l (its length when
// it was listed; a running container may have written more since) to w,
// fetched from its node manager in bounded chunks. It returns the number of
// bytes written.
func (c *Client) CopyLog(ctx context.Context, appID string, l ContainerLog, w io.Writer) (int64, error) {
	ref := c.env.RemoteRef(cluster.ParseNodeAddress(l.NodeAddress), cluster.NodeManagerEndpointName)
	var off int64
	for off < l.Size {
		n := int32(min(l.Size-off, cluster.MaxLogChunk))
		r, err := actor.AskAs[*messages.NmContainerLogChunk](ctx, ref, &messages.NmReadContainerLog{AppId: appID,
			ContainerId: l.ContainerID, Name: l.Name, Offset: off, Length: n, User: c.user})
		if err != nil {
			return off, err
		}
		data := r.GetData()
		if len(data) == 0 {
			break // the file shrank
		}
		if _, err := w.Write(data); err != nil {
			return off, err
		}
		off += int64(len(data))
	}
	return off, nil
}
