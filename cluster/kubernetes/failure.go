package kubernetes

// failure.go says why a cluster-mode driver pod failed: its container's
// termination message (the driver container's terminationMessagePolicy
// FallbackToLogsOnError makes the kubelet put its log's tail there when the
// program wrote none), else the last lines of its log, read by submit.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	corev1 "k8s.io/api/core/v1"
)

// driverLogLines is how many of a failed driver pod's last log lines
// submit prints, and driverLogBytes bounds what it reads of them.
const (
	driverLogLines = 20
	driverLogBytes = 16 << 10
)

// driverFailedError returns the error of the failed driver pod p, having
// written to out why it failed: its termination message when it has one
// (it is in the error too, see driverFailure), else its last
// driverLogLines log lines, whose last non-empty one ends the error.
func driverFailedError(ctx context.Context, client *kubeclient.Client, out io.Writer, p *corev1.Pod) error {
	err := fmt.Errorf("%w: driver pod %s:%s: %s", ErrDriverFailed, p.Namespace, p.Name, driverFailure(p))
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && strings.TrimSpace(t.Message) != "" {
			fmt.Fprintf(out, "Driver pod %s:%s failed; its termination message:\n%s\n", p.Namespace, p.Name, indent(t.Message))
			return err
		}
	}
	tail := int64(driverLogLines)
	limit := int64(driverLogBytes)
	lctx, cancel := context.WithTimeout(ctx, client.Timeout)
	log, lerr := client.CoreV1().PodLog(lctx, p.Namespace, p.Name,
		&corev1.PodLogOptions{Container: kubeconf.DriverContainerName, TailLines: &tail, LimitBytes: &limit})
	cancel()
	if lerr != nil {
		fmt.Fprintf(out, "Driver pod %s:%s failed; its log could not be read: %v\n", p.Namespace, p.Name,
			client.APIError(lerr, "get", "pods/"+p.Name+"/log", p.Namespace))
		return err
	}
	text := strings.TrimRight(string(log), "\n")
	if text == "" {
		return err
	}
	fmt.Fprintf(out, "Driver pod %s:%s failed; the last lines of its log:\n%s\n", p.Namespace, p.Name, indent(text))
	lines := strings.Split(text, "\n")
	return fmt.Errorf("%w; its log ends: %s", err, strings.TrimSpace(lines[len(lines)-1]))
}

// indent prefixes each line of s with a tab.
func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}
