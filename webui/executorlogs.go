package webui

// This file holds the driver UI's executor log route,
// /executors/logs/?id=N&start=N: a bounded part of an executor's log read
// by the cluster manager (on Kubernetes, its pod's log through the API
// server), as plain text.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
)

// MaxExecutorLogBytes is the most an executor log answer holds (64 KiB).
const MaxExecutorLogBytes = 64 << 10

// ExecutorLogReader reads a part of the log of executor id of the
// driver's application: from byte start, or the last -start bytes when
// start is negative, at most limit bytes (limit is at most
// MaxExecutorLogBytes). It finds the executor among the application's own
// (never by a name the request gives). Its error matches fs.ErrNotExist
// when the application has no such executor (404); any other error is the
// cluster's answer (502).
type ExecutorLogReader func(ctx context.Context, id string, start int64, limit int) ([]byte, error)

// WithExecutorLogs makes a driver's UI serve its executors' logs through r
// on /executors/logs/?id=N&start=N (start as YARN's, default -4096).
// Without it the route answers 404.
func WithExecutorLogs(r ExecutorLogReader) Option {
	return optionFunc(func(o *options) { o.executorLogs = r })
}

// ExecutorLogPath is the path of executor id's log on a driver's UI
// with WithExecutorLogs: its last 4 KiB.
func ExecutorLogPath(id string) string {
	return "/executors/logs/?id=" + url.QueryEscape(id) + "&start=" + strconv.Itoa(defaultLogStart)
}

// executorLog serves one executor log part.
func (o *options) executorLog(w http.ResponseWriter, r *http.Request) {
	if o.executorLogs == nil {
		http.Error(w, "this driver serves no executor logs: its executors' log links say where theirs are", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	id := q.Get("id")
	if id == "" {
		http.Error(w, "id: the executor's id is required", http.StatusBadRequest)
		return
	}
	start := int64(defaultLogStart)
	if s := q.Get("start"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			http.Error(w, "start: not an integer: "+s, http.StatusBadRequest)
			return
		}
		start = n
	}
	if start < -MaxExecutorLogBytes {
		start = -MaxExecutorLogBytes // before it is negated: -MinInt64 overflows
	}
	limit := MaxExecutorLogBytes
	if start < 0 {
		limit = int(-start)
	}
	data, err := o.executorLogs(r.Context(), id, start, limit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		http.Error(w, fmt.Sprintf("executor %s: %v", id, err), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, fmt.Sprintf("reading executor %s's log: %v", id, err), http.StatusBadGateway)
		return
	}
	if len(data) > limit { // a reader that ignored the bound: keep the part asked for
		if start < 0 {
			data = data[len(data)-limit:]
		} else {
			data = data[:limit]
		}
	}
	// The log is the executor's own text: never rendered as a page.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}
