package webui

// This file holds a node manager UI's container log route, YARN's
// /node/containerlogs/{containerId}/{user}/{file}?start=N: a bounded part
// of one log file, as plain text.

import (
	"errors"
	"io/fs"
	"net/http"
	"strconv"
)

// ContainerLog is a part of one container log file.
type ContainerLog struct {
	// Data are the bytes read; Start is their offset in the file and Size
	// the file's size.
	Data        []byte
	Start, Size int64
}

// ContainerLogReader reads a part of a container's log file for a node
// manager's UI: file of container id, whose URL names owner, asked by
// requester, from start (negative: counted from the end). It bounds what it
// reads. Its error matches fs.ErrNotExist for a log it does not serve (404)
// and fs.ErrPermission for a requester that may not read it (403).
type ContainerLogReader func(id, owner, file, requester string, start int64) (ContainerLog, error)

// defaultLogStart is the start of a log request without ?start=: the last
// 4 KiB, as YARN.
const defaultLogStart = -4096

// WithContainerLogs makes a node manager's UI serve its containers' logs
// through r on /node/containerlogs/{containerId}/{user}/{file}?start=N.
// The requester handed to r is the user name of the request's HTTP Basic
// credentials; for a bearer token (a holder of the secret) or a UI without
// a secret, it is the URL's user. Without this option the route answers 404.
func WithContainerLogs(r ContainerLogReader) Option {
	return optionFunc(func(o *options) { o.containerLogs = r })
}

// containerLog serves one container log part.
func (o *options) containerLog(w http.ResponseWriter, r *http.Request) {
	if o.containerLogs == nil {
		http.Error(w, "this node manager serves no container logs", http.StatusNotFound)
		return
	}
	start := int64(defaultLogStart)
	if s := r.URL.Query().Get("start"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			http.Error(w, "start: not an integer: "+s, http.StatusBadRequest)
			return
		}
		start = n
	}
	owner := r.PathValue("user")
	requester := owner
	if name, ok := User(r.Context()); ok && name != "" {
		requester = name
	}
	part, err := o.containerLogs(r.PathValue("containerId"), owner, r.PathValue("file"), requester, start)
	switch {
	case errors.Is(err, fs.ErrPermission):
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	// The log is the container's own text: never rendered as a page.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Log-Start", strconv.FormatInt(part.Start, 10))
	w.Header().Set("X-Log-Size", strconv.FormatInt(part.Size, 10))
	_, _ = w.Write(part.Data)
}
