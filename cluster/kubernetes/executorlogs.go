package kubernetes

// executorlogs.go reads an executor's log for the driver's UI
// (webui.WithExecutorLogs): the log of the application's executor pod,
// found by the application's labels and the executor's id, through the API
// server's pods/log.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/executorpods"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// executorLogs reads the logs of an application's executor pods.
type executorLogs struct {
	client    *kubeclient.Client
	namespace string
	appID     string
}

// read is a webui.ExecutorLogReader: the part of executor id's pod log from
// byte start (negative: the last -start bytes), at most limit bytes. id
// must be an executor id of this application (a decimal number); the pod
// is the one of the application's executor pods labelled with it, never a
// pod the request names.
func (l executorLogs) read(ctx context.Context, id string, start int64, limit int) ([]byte, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != id {
		return nil, fmt.Errorf("no executor %q in application %s: %w", id, l.appID, fs.ErrNotExist)
	}
	sel := executorpods.Selector(l.appID) + "," + kubeconf.LabelExecutorID + "=" + id
	pods, err := l.client.CoreV1().Pods(l.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, l.client.APIError(err, "list", "pods", l.namespace)
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("no executor pod %s in namespace %s (label %s): %w", id, l.namespace, sel, fs.ErrNotExist)
	}
	name := pods.Items[0].Name
	opts := &corev1.PodLogOptions{Container: kubeconf.ExecutorContainerName}
	if start >= 0 {
		end := start + int64(limit)
		opts.LimitBytes = &end
	}
	stream, err := l.client.CoreV1().PodLogStream(ctx, l.namespace, name, opts)
	if err != nil {
		return nil, l.client.APIError(err, "get", "pods/"+name+"/log", l.namespace)
	}
	defer stream.Close()
	if start >= 0 {
		if _, err := io.CopyN(io.Discard, stream, start); errors.Is(err, io.EOF) {
			return nil, nil // the log is shorter than start
		} else if err != nil {
			return nil, err
		}
		return io.ReadAll(io.LimitReader(stream, int64(limit)))
	}
	return lastBytes(stream, int(min(-start, int64(limit))))
}

// lastBytes reads r to its end and returns its last n bytes, holding at
// most 2n+32 KiB.
func lastBytes(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, 2*n+32<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf[:0], buf[len(buf)-n:]...)
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(buf) > n {
		buf = buf[len(buf)-n:]
	}
	return buf, nil
}
