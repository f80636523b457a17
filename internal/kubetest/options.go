package kubetest

// options.go holds Start's options: nodes, their capacity, the pods' PATH,
// the log folder and the start-up bound.

import "time"

type options struct {
	nodes        int
	cpu, memory  string
	pods         int
	pathPrefix   string
	images       map[string]string
	logDir       string
	startTimeout time.Duration
}

// Option configures Start.
type Option func(*options)

// WithNodes sets how many nodes (sparkrpc-kubelet processes) the control plane has; default 1.
func WithNodes(n int) Option { return func(o *options) { o.nodes = n } }

// WithNodeCapacity sets each node's cpu, memory and pod capacity; default "4", "8Gi", 110.
func WithNodeCapacity(cpu string, memory string, pods int) Option {
	return func(o *options) { o.cpu, o.memory, o.pods = cpu, memory, pods }
}

// WithPathPrefix puts dir in front of PATH for pod processes (and for finding their command).
func WithPathPrefix(dir string) Option { return func(o *options) { o.pathPrefix = dir } }

// WithImage makes dir the programs of image: a pod whose container runs image
// finds its command in dir first (the nodes pull no image).
func WithImage(image, dir string) Option {
	return func(o *options) {
		if o.images == nil {
			o.images = map[string]string{}
		}
		o.images[image] = dir
	}
}

// WithLogDir writes the components' logs (etcd.log, kube-apiserver.log, ...) to dir, which is
// kept. By default they go to a temporary folder removed at Stop unless KeepLogs was called.
func WithLogDir(dir string) Option { return func(o *options) { o.logDir = dir } }

// WithStartTimeout bounds Start (besides its context); default 2 minutes.
func WithStartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }
