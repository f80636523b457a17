package cluster

// This file holds container logs: how node managers list and serve them,
// and how a client reads them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// ErrNoSuchLog is returned for a container log file a node manager does
// not have.
var ErrNoSuchLog = errors.New("cluster: no such container log")

// maxLogChunk bounds the bytes of one NmReadContainerLog answer, well
// below the smallest sensible spark.rpc.message.maxSize.
const maxLogChunk = 256 << 10

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
// ErrUnknownApplication when the resource manager does not know appID.
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
		if n.GetState() == "LOST" {
			out.Unavailable = append(out.Unavailable, fmt.Sprintf("node %s is lost: its logs are not available", n.GetNodeId()))
			continue
		}
		ref := c.env.RemoteRef(parseNodeAddress(n.GetAddress()), NodeManagerEndpointName)
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
	ref := c.env.RemoteRef(parseNodeAddress(l.NodeAddress), NodeManagerEndpointName)
	var off int64
	for off < l.Size {
		n := int32(min(l.Size-off, maxLogChunk))
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

// logName reports whether s can be a single folder or file name of the
// log tree: no separator, not "." or "..".
func logName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// applicationLogs lists the regular files in the log folders of appID's
// containers on this node.
func (nm *NodeManager) applicationLogs(appID string) (*messages.NmApplicationLogs, error) {
	if err := ValidateAppID(appID); err != nil {
		return nil, err
	}
	appDir := filepath.Join(nm.cfg.Dir, "logs", appID)
	containers, err := os.ReadDir(appDir)
	if errors.Is(err, fs.ErrNotExist) {
		return &messages.NmApplicationLogs{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: logs of %s: %w", appID, err)
	}
	out := &messages.NmApplicationLogs{}
	for _, ct := range containers {
		if !ct.IsDir() || ValidateContainerID(ct.Name()) != nil {
			continue
		}
		files, err := os.ReadDir(filepath.Join(appDir, ct.Name()))
		if err != nil {
			continue
		}
		// stdout, then stderr, then any other file by name.
		slices.SortStableFunc(files, func(a, b fs.DirEntry) int { return logRank(a.Name()) - logRank(b.Name()) })
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			info, err := f.Info()
			if err != nil {
				continue
			}
			out.Files = append(out.Files, &messages.NmContainerLogFile{ContainerId: ct.Name(), Name: f.Name(),
				Size: info.Size(), ModifiedMs: info.ModTime().UnixMilli()})
		}
	}
	return out, nil
}

// logRank orders a container's log files: stdout, stderr, then the others.
func logRank(name string) int {
	switch name {
	case "stdout":
		return 0
	case "stderr":
		return 1
	}
	return 2
}

// readLog reads a bounded chunk of one container log file of this node.
func (nm *NodeManager) readLog(req *messages.NmReadContainerLog) (*messages.NmContainerLogChunk, error) {
	if err := ValidateAppID(req.GetAppId()); err != nil {
		return nil, err
	}
	ct, name := req.GetContainerId(), req.GetName()
	if ValidateContainerID(ct) != nil || !logName(name) || req.GetOffset() < 0 {
		return nil, fmt.Errorf("%w: invalid request for container %q, file %q, offset %d", ErrNoSuchLog, ct, name, req.GetOffset())
	}
	path := filepath.Join(nm.cfg.Dir, "logs", req.GetAppId(), ct, name)
	if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s of container %s of %s on %s", ErrNoSuchLog, name, ct, req.GetAppId(), nm.nodeID)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s of container %s: %v", ErrNoSuchLog, name, ct, err)
	}
	defer f.Close()
	n := int(req.GetLength())
	if n <= 0 || n > maxLogChunk {
		n = maxLogChunk
	}
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, req.GetOffset())
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("cluster: reading %s of container %s: %w", name, ct, err)
	}
	return &messages.NmContainerLogChunk{Data: buf[:k]}, nil
}
