package nodemanager

// This file holds the container logs that the node manager's web UI serves
// (YARN's /node/containerlogs/{containerId}/{user}/{file}): the URLs a
// container gets as SPARK_LOG_URL_STDOUT and SPARK_LOG_URL_STDERR, and the
// bounded, confined read behind them.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/regularfile"
)

// MaxWebLogBytes bounds the bytes of one container log read through the
// web UI (ReadContainerLog).
const MaxWebLogBytes = 64 << 10

// DefaultWebLogStart is the start of a container log URL without one: the
// last 4 KiB, as YARN's containerlogs page.
const DefaultWebLogStart = -4096

// ContainerLogPart is a part of one container log file.
type ContainerLogPart struct {
	// Data are the bytes read, at most MaxWebLogBytes.
	Data []byte
	// Start is the offset of Data in the file; Size is the file's size
	// when it was read.
	Start, Size int64
}

// ContainerLogURL is the web UI URL of file of container id, owned by user,
// on a node manager whose web UI is at base (http://host:port): the URL
// that the container gets as SPARK_LOG_URL_<FILE>. It ends with
// ?start=-4096, the last 4 KiB, as Spark on YARN's log links do.
func ContainerLogURL(base, id, user, file string) string {
	if user == "" {
		user = "-"
	}
	return strings.TrimRight(base, "/") + "/node/containerlogs/" + url.PathEscape(id) + "/" + url.PathEscape(user) + "/" +
		url.PathEscape(file) + fmt.Sprintf("?start=%d", DefaultWebLogStart)
}

// containerLogURLs are the SPARK_LOG_URL_* variables of spec's container:
// none when the node manager serves no web UI (a file:// path is no use in
// a browser on another machine).
func containerLogURLs(spec containerSpec) map[string]string {
	if spec.webUI == "" {
		return nil
	}
	return map[string]string{
		"SPARK_LOG_URL_STDOUT": ContainerLogURL(spec.webUI, spec.id, spec.user, "stdout"),
		"SPARK_LOG_URL_STDERR": ContainerLogURL(spec.webUI, spec.id, spec.user, "stderr"),
	}
}

// appOfContainer returns the application id of a container id of the
// resource manager's form (container_<ts>_<app>_<attempt>_<seq>).
func appOfContainer(id string) (string, error) {
	if err := cluster.ValidateContainerID(id); err != nil {
		return "", err
	}
	parts := strings.Split(id, "_")
	return "application_" + parts[1] + "_" + parts[2], nil
}

// ReadContainerLog reads the log file named file of container id for the
// web UI. owner is the user that the URL names: it must be the
// application's owner when the node knows it. requester is the user that
// asks (the UI's authenticated user): the application's ACLs
// (spark.ui.view.acls, spark.admin.acls) must let it read the logs. start is
// the offset to read from; a negative start counts from the end (-4096: the
// last 4 KiB). At most MaxWebLogBytes bytes are read.
//
// The file is opened through an os.Root on that container's log folder: a
// name that leaves it (a separator, "..", a symbolic link) is refused. The
// error matches fs.ErrNotExist and cluster.ErrNoSuchLog for a file that is
// not there (or a container of another owner), fs.ErrPermission and
// cluster.ErrPermissionDenied for a requester the ACLs refuse.
func (nm *NodeManager) ReadContainerLog(id, owner, file, requester string, start int64) (ContainerLogPart, error) {
	notFound := fmt.Errorf("%w: %w: %q of container %q on %s", cluster.ErrNoSuchLog, fs.ErrNotExist, file, id, nm.nodeID)
	appID, err := appOfContainer(id)
	if err != nil || !logName(file) || strings.HasPrefix(file, ".") {
		return ContainerLogPart{}, notFound
	}
	acls := nm.appACLs(appID)
	if o := acls.GetOwner(); o != "" && o != owner {
		return ContainerLogPart{}, notFound
	}
	if !cluster.ACLAllows(acls, nm.cfg.AdminACLs, requester, false) {
		return ContainerLogPart{}, fmt.Errorf("%w: %w: user %q may not read the logs of %s", cluster.ErrPermissionDenied, fs.ErrPermission,
			requester, appID)
	}
	root, err := os.OpenRoot(filepath.Join(nm.cfg.Dir, "logs", appID, id))
	if err != nil {
		return ContainerLogPart{}, notFound
	}
	defer root.Close()
	if info, err := root.Lstat(file); err != nil || !info.Mode().IsRegular() {
		return ContainerLogPart{}, notFound
	}
	f, err := regularfile.OpenIn(root, file) // the container may have replaced it since
	if err != nil {
		return ContainerLogPart{}, notFound
	}
	defer f.Close()
	return readPart(f, start)
}

// readPart reads at most MaxWebLogBytes of f from start (negative: from
// the end).
func readPart(f *os.File, start int64) (ContainerLogPart, error) {
	info, err := f.Stat()
	if err != nil {
		return ContainerLogPart{}, err
	}
	size := info.Size()
	if start < 0 {
		start = max(0, size+start)
	}
	start = min(start, size)
	buf := make([]byte, min(size-start, MaxWebLogBytes))
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return ContainerLogPart{}, fmt.Errorf("cluster: reading %s: %w", f.Name(), err)
	}
	return ContainerLogPart{Data: buf[:n], Start: start, Size: size}, nil
}
