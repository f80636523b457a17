// Command sparkrpc-kubelet is a Kubernetes node agent, built on virtual-kubelet, that runs each pod
// bound to its node as a local process instead of a container. It is the node of the local control
// plane that sparkrpc's Kubernetes tests (and users trying `--master k8s://` on one machine) start.
//
// For each pod it runs the FIRST container's command and args (Kubernetes semantics: command
// replaces the image entrypoint, args follow it; with no command, args[0] is the program) as a
// process in its own process group, with the container's environment (literal values with $(VAR)
// expansion, Downward API fieldRefs such as metadata.name, metadata.namespace, status.podIP and
// spec.nodeName, configMap and secret key refs, envFrom). Images are not pulled: --image
// IMAGE=DIR says that the programs of image IMAGE are the files of folder DIR, where command[0]
// is looked up first; then in PATH extended by --path-prefix. stdout and stderr go to a per-container log file that
// the node serves, so `kubectl logs` works. The pod goes Pending -> Running -> Succeeded or Failed
// with the exit code (reason Completed, Error or StartError). Deleting a pod sends SIGTERM to its
// process group and SIGKILL after the pod's grace period. Restart policies are not applied (a
// finished container is not restarted), init and further containers are not run (reported as
// waiting), and the pod IP is 127.0.0.1. Volumes are written to the pod's directory, the process's
// working directory, with each mount linked at its mount path relative to it; a pod's
// service-account volume gets a token bound to the pod and KUBECONFIG naming it (see volumes.go).
//
// The node registers Ready and schedulable with the capacity given by --cpu, --memory and --pods,
// publishes InternalIP 127.0.0.1 and the port of its TLS endpoint (logs, stats), and on SIGTERM or
// SIGINT stops every pod's process group before it exits.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/log"
	vkslog "github.com/virtual-kubelet/virtual-kubelet/log/slog"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

// version is what the node reports as its kubelet version.
const version = "v1.37.2"

type config struct {
	kubeconfig   string
	nodeName     string
	listenAddr   string
	port         int
	cpu          string
	memory       string
	pods         int
	pathPrefix   string
	images       map[string]string
	rootDir      string
	tlsCertFile  string
	tlsKeyFile   string
	clientCAFile string
	stopGrace    time.Duration
	logLevel     string
}

func main() {
	c := config{images: map[string]string{}}
	flag.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	flag.StringVar(&c.nodeName, "node-name", "", "name of the node (default: the host name)")
	flag.StringVar(&c.listenAddr, "address", "127.0.0.1", "address of the node's TLS endpoint (logs, stats); also published as the node's InternalIP")
	flag.IntVar(&c.port, "port", 0, "port of the node's TLS endpoint; 0 picks a free one")
	flag.StringVar(&c.cpu, "cpu", "4", "cpu capacity of the node")
	flag.StringVar(&c.memory, "memory", "8Gi", "memory capacity of the node")
	flag.IntVar(&c.pods, "pods", 110, "how many pods the node takes")
	flag.StringVar(&c.pathPrefix, "path-prefix", "", "directories (separated by "+string(filepath.ListSeparator)+") searched before PATH for a pod's command")
	flag.Func("image", "IMAGE=DIR: the programs of image IMAGE are the files of folder DIR (repeatable)", func(v string) error {
		image, dir, ok := strings.Cut(v, "=")
		if !ok || image == "" || dir == "" {
			return fmt.Errorf("want IMAGE=DIR, not %q", v)
		}
		c.images[image] = dir
		return nil
	})
	flag.StringVar(&c.rootDir, "root-dir", "", "directory for pods' working directories and logs (required)")
	flag.StringVar(&c.tlsCertFile, "tls-cert-file", "", "serving certificate of the TLS endpoint (default: a self-signed one)")
	flag.StringVar(&c.tlsKeyFile, "tls-private-key-file", "", "key of --tls-cert-file")
	flag.StringVar(&c.clientCAFile, "client-ca-file", "", "if set, clients of the TLS endpoint must present a certificate signed by this CA")
	flag.DurationVar(&c.stopGrace, "stop-grace-period", 5*time.Second, "on SIGTERM, how long pods get between SIGTERM and SIGKILL")
	flag.StringVar(&c.logLevel, "v", "info", "log level: debug, info, warn or error")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "sparkrpc-kubelet:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	capacity, logger, err := c.resolve()
	if err != nil {
		return err
	}
	log.L = vkslog.FromSlog(logger)
	restCfg, client, err := apiClient(c.kubeconfig)
	if err != nil {
		return err
	}
	tlsCfg, err := serverTLS(c)
	if err != nil {
		return err
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(c.listenAddr, fmt.Sprint(c.port)), tlsCfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	ctx = log.WithLogger(ctx, log.L)

	prov := newProvider(providerConfig{
		nodeName:   c.nodeName,
		nodeIP:     c.listenAddr,
		pathPrefix: c.pathPrefix,
		images:     c.images,
		rootDir:    c.rootDir,
		apiServer:  restCfg.Host,
		client:     client,
		logger:     logger,
	})
	defer prov.shutdown(c.stopGrace)

	mux := http.NewServeMux()
	n, err := nodeutil.NewNode(c.nodeName,
		func(pc nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
			prov.listers = pc
			describeNode(pc.Node, c, capacity, port)
			return prov, nil, nil
		},
		nodeutil.WithClient(client),
		nodeutil.AttachProviderRoutes(mux),
		func(nc *nodeutil.NodeConfig) error {
			// Env vars are resolved by the provider: virtual-kubelet cannot resolve status.podIP.
			nc.SkipDownwardAPIResolution = true
			nc.NumWorkers = 4
			nc.InformerResyncPeriod = time.Minute
			return nil
		},
	)
	if err != nil {
		return err
	}

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close below
	defer srv.Close()
	return runNode(ctx, cancel, n, client, c.nodeName, port, logger)
}

// resolve checks the flags and returns the node's capacity and the logger
// they ask for, filling in the node's name from the host name.
func (c *config) resolve() (corev1.ResourceList, *slog.Logger, error) {
	if c.kubeconfig == "" || c.rootDir == "" {
		return nil, nil, errors.New("--kubeconfig and --root-dir are required")
	}
	if c.nodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, nil, err
		}
		c.nodeName = strings.ToLower(h)
	}
	cpu, err := resource.ParseQuantity(c.cpu)
	if err != nil {
		return nil, nil, fmt.Errorf("--cpu: %w", err)
	}
	mem, err := resource.ParseQuantity(c.memory)
	if err != nil {
		return nil, nil, fmt.Errorf("--memory: %w", err)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("-v: %w", err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    cpu,
		corev1.ResourceMemory: mem,
		corev1.ResourcePods:   *resource.NewQuantity(int64(c.pods), resource.DecimalSI),
	}
	return capacity, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// apiClient returns the API server's configuration from kubeconfig and a
// client with a kubelet's request rates.
func apiClient(kubeconfig string) (*rest.Config, kubernetes.Interface, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	// A kubelet's defaults (kubeAPIQPS 50, kubeAPIBurst 100), not client-go's 5 and 10: every pod
	// start takes a token request and status updates.
	restCfg.QPS, restCfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, nil, err
	}
	return restCfg, client, nil
}

// describeNode fills in the node object virtual-kubelet registers: its
// capacity, addresses, kubelet port, system info and labels, and every
// condition false until the node is ready.
func describeNode(nd *corev1.Node, c config, capacity corev1.ResourceList, port int) {
	nd.Status.Capacity = capacity
	nd.Status.Allocatable = capacity.DeepCopy()
	nd.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: c.listenAddr},
		{Type: corev1.NodeHostName, Address: c.nodeName},
	}
	nd.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	nd.Status.NodeInfo = corev1.NodeSystemInfo{
		KubeletVersion:  version,
		OperatingSystem: runtime.GOOS,
		Architecture:    runtime.GOARCH,
	}
	nd.Labels["kubernetes.io/os"] = runtime.GOOS
	nd.Labels["kubernetes.io/arch"] = runtime.GOARCH
	nd.Labels["node.kubernetes.io/instance-type"] = "sparkrpc-process"
	now := metav1.Now()
	for i := range nd.Status.Conditions {
		cond := &nd.Status.Conditions[i]
		cond.LastHeartbeatTime, cond.LastTransitionTime = now, now
		if cond.Type == corev1.NodeReady {
			cond.Status, cond.Reason = corev1.ConditionFalse, "KubeletNotReady"
			continue
		}
		cond.Status, cond.Reason = corev1.ConditionFalse, "KubeletHasNo"+string(cond.Type)
	}
}

// runNode runs node n until ctx ends: it waits for the node to be ready,
// removes the not-ready taint, and returns the node's error, if any.
func runNode(ctx context.Context, cancel context.CancelFunc, n *nodeutil.Node, client kubernetes.Interface, name string, port int, logger *slog.Logger) error {
	go n.Run(ctx) //nolint:errcheck // its error is read from n.Err() after Done
	if err := n.WaitReady(ctx, 2*time.Minute); err != nil {
		cancel()
		<-n.Done()
		return fmt.Errorf("node not ready: %w", err)
	}
	if err := removeNotReadyTaint(ctx, client, name); err != nil {
		cancel()
		<-n.Done()
		return err
	}
	logger.Info("node ready", "node", name, "port", port)

	<-n.Done()
	if err := n.Err(); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return err
	}
	logger.Info("stopping", "node", name)
	return nil
}

// removeNotReadyTaint removes the node.kubernetes.io/not-ready taint that the API server's
// TaintNodesByCondition admission puts on every new node: without node-lifecycle-controller nobody
// else would, and kube-scheduler would never bind a pod here. The node is Ready at this point.
func removeNotReadyTaint(ctx context.Context, client kubernetes.Interface, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		kept := n.Spec.Taints[:0]
		for _, t := range n.Spec.Taints {
			if t.Key != corev1.TaintNodeNotReady {
				kept = append(kept, t)
			}
		}
		if len(kept) == len(n.Spec.Taints) {
			return nil
		}
		n.Spec.Taints = kept
		_, err = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s vanished while removing its not-ready taint", name)
		}
		return err
	})
}

// serverTLS is the TLS configuration of the node's endpoint: the given certificate or a self-signed
// one for the listen address, and client certificates required when --client-ca-file is set.
func serverTLS(c config) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.tlsCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCertFile, c.tlsKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	} else {
		cert, err := selfSigned(c.nodeName, c.listenAddr)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.clientCAFile != "" {
		pem, err := os.ReadFile(c.clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca-file %s: no PEM certificate", c.clientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
