// This file holds how a node manager lists and serves its containers'
// logs.

package nodemanager

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/regularfile"
	"github.com/sparkrpc/sparkrpc/messages"
)

// logName reports whether s can be a single folder or file name of the
// log tree: no separator, not "." or "..".
func logName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// applicationLogs lists the regular files in the log folders of appID's
// containers on this node.
func (nm *NodeManager) applicationLogs(appID string) (*messages.NmApplicationLogs, error) {
	if err := cluster.ValidateAppID(appID); err != nil {
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
		if !ct.IsDir() || cluster.ValidateContainerID(ct.Name()) != nil {
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
	if err := cluster.ValidateAppID(req.GetAppId()); err != nil {
		return nil, err
	}
	ct, name := req.GetContainerId(), req.GetName()
	if cluster.ValidateContainerID(ct) != nil || !logName(name) || req.GetOffset() < 0 {
		return nil, fmt.Errorf("%w: invalid request for container %q, file %q, offset %d", cluster.ErrNoSuchLog, ct, name, req.GetOffset())
	}
	path := filepath.Join(nm.cfg.Dir, "logs", req.GetAppId(), ct, name)
	// The container may replace its logs with anything: a FIFO would
	// block an open, and this endpoint with it.
	f, err := regularfile.OpenNoFollow(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s of container %s of %s on %s", cluster.ErrNoSuchLog, name, ct, req.GetAppId(), nm.nodeID)
	}
	defer f.Close()
	n := int(req.GetLength())
	if n <= 0 || n > cluster.MaxLogChunk {
		n = cluster.MaxLogChunk
	}
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, req.GetOffset())
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("cluster: reading %s of container %s: %w", name, ct, err)
	}
	return &messages.NmContainerLogChunk{Data: buf[:k]}, nil
}
