package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// BinEnv is the environment variable naming the folder of the control-plane binaries.
const BinEnv = "SPARKRPC_KUBE_BIN"

// binaries are the programs Start needs in its binDir (built by build-controlplane).
var binaries = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "sparkrpc-kubelet"}

// ContextName is the name of the context (and cluster) in the admin kubeconfig.
const ContextName = "sparkrpc-local"

// controllers are the kube-controller-manager controllers the control plane runs: ownerReference
// garbage collection, namespace deletion, the default service account and its token, and the
// kube-root-ca.crt config map that service-account volumes project.
var controllers = []string{
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
}

// ErrMissingBinary is returned by Start when binDir lacks one of the control plane's programs:
// etcd, kube-apiserver, kube-scheduler, kube-controller-manager and sparkrpc-kubelet.
var ErrMissingBinary = errors.New("kubetest: control-plane binary missing (build them with internal/kubetest/build-controlplane DIR)")

// ErrComponentExited is returned by Start when a component exits before the control plane is ready.
var ErrComponentExited = errors.New("kubetest: control-plane component exited")

// ControlPlane is a running local Kubernetes control plane: etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager and sparkrpc-kubelet nodes, each a child process in its own process
// group, on free loopback ports.
type ControlPlane struct {
	work       string // certificates, tokens, kubeconfigs, etcd data, node directories
	logDir     string
	ownLogDir  bool
	server     string
	caFile     string
	adminToken string
	kubeconfig string
	restCfg    *rest.Config
	httpClient *http.Client
	api        apiClient
	nodeNames  []string

	webhook  *http.Server
	tokensMu sync.Mutex
	tokens   map[string]authnv1.UserInfo

	etcd, apiserver *process
	controllers     []*process // scheduler, controller manager
	nodes           []*process

	mu       sync.Mutex
	keepLogs bool
	stopped  bool
	stopErr  error
}

// Start starts a control plane from the binaries in binDir and returns once /readyz is ok, the
// default namespace's default ServiceAccount exists and every node is Ready and schedulable.
// ctx bounds the start only. On error everything started is stopped again and the logs are kept
// (their folder is named in the error).
func Start(ctx context.Context, binDir string, opts ...Option) (*ControlPlane, error) {
	o := options{nodes: 1, cpu: "4", memory: "8Gi", pods: 110, startTimeout: 2 * time.Minute}
	for _, opt := range opts {
		opt(&o)
	}
	if o.nodes < 0 {
		return nil, fmt.Errorf("kubetest: WithNodes(%d): negative", o.nodes)
	}
	for _, b := range binaries {
		if fi, err := os.Stat(filepath.Join(binDir, b)); err != nil || fi.IsDir() {
			return nil, fmt.Errorf("%w: %s in %q", ErrMissingBinary, b, binDir)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.startTimeout)
	defer cancel()

	work, err := os.MkdirTemp("", "sparkrpc-kube-")
	if err != nil {
		return nil, err
	}
	c := &ControlPlane{work: work, logDir: o.logDir, tokens: map[string]authnv1.UserInfo{}}
	if c.logDir == "" {
		c.logDir = filepath.Join(work, "logs")
		c.ownLogDir = true
	}
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		_ = os.RemoveAll(work)
		return nil, err
	}
	if err := c.start(ctx, binDir, o); err != nil {
		c.KeepLogs()
		_ = c.Stop()
		return nil, fmt.Errorf("%w (component logs in %s)", err, c.logDir)
	}
	return c, nil
}

// start brings the control plane up one step at a time, each step having what the next needs: the
// certificates and the static tokens, the token webhook, etcd, the API server and the wait for its
// /readyz, the kubeconfigs, the scheduler and the controller manager, the nodes, and last the waits
// for the default ServiceAccount and for the nodes. Start stops whatever it started if a step fails.
func (c *ControlPlane) start(ctx context.Context, binDir string, o options) error {
	ca, err := c.writeCertificates()
	if err != nil {
		return err
	}
	c.nodeNames = nodeNames(o.nodes)
	toks, err := c.writeTokenFile(c.workPath("tokens.csv"))
	if err != nil {
		return err
	}
	if err := c.startWebhook(ca, c.workPath("webhook.kubeconfig")); err != nil {
		return err
	}
	etcdURL, err := c.startEtcd(ctx, binDir)
	if err != nil {
		return err
	}
	if err := c.startAPIServer(binDir, etcdURL); err != nil {
		return err
	}
	if err := c.connect(); err != nil {
		return err
	}
	if err := c.waitForAPIServer(ctx); err != nil {
		return err
	}
	if err := c.writeKubeconfigs(toks); err != nil {
		return err
	}
	if err := c.startControllers(binDir); err != nil {
		return err
	}
	if err := c.startNodes(binDir, ca, toks.nodes, o); err != nil {
		return err
	}
	if err := c.waitForDefaultServiceAccount(ctx); err != nil {
		return err
	}
	return c.waitForNodes(ctx)
}

// workPath is the path of name in the control plane's working folder.
func (c *ControlPlane) workPath(name string) string { return filepath.Join(c.work, name) }

// nodeNames are the names of n nodes: sparkrpc-node-1 to sparkrpc-node-N.
func nodeNames(n int) []string {
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("sparkrpc-node-%d", i))
	}
	return names
}

// components are the processes started so far, in start order: etcd, the API server, the
// scheduler and the controller manager, the nodes.
func (c *ControlPlane) components() []*process {
	all := append([]*process{c.etcd, c.apiserver}, c.controllers...)
	return append(all, c.nodes...)
}

// startEtcd starts etcd on free loopback ports, with its data in the working folder, and returns
// its client URL once its /health answers healthy.
func (c *ControlPlane) startEtcd(ctx context.Context, binDir string) (string, error) {
	etcdPort, err := freePort()
	if err != nil {
		return "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return "", err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	c.etcd, err = startProcess("etcd", filepath.Join(binDir, "etcd"), c.logDir,
		"--data-dir="+c.workPath("etcd"),
		"--listen-client-urls="+etcdURL,
		"--listen-peer-urls=http://127.0.0.1:"+strconv.Itoa(peerPort),
		"--unsafe-no-fsync",
	)
	if err != nil {
		return "", err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	if err := c.waitFor(ctx, "etcd health", []*process{c.etcd}, func() bool {
		resp, err := hc.Get(etcdURL + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"true"`))
	}); err != nil {
		return "", err
	}
	return etcdURL, nil
}

// startAPIServer starts kube-apiserver on a free loopback port, on the etcd at etcdURL, with the
// certificates, the static tokens, the token webhook and the service-account key in the working
// folder; it sets Server. It does not wait for the API server (waitForAPIServer does).
func (c *ControlPlane) startAPIServer(binDir, etcdURL string) error {
	apiPort, err := freePort()
	if err != nil {
		return err
	}
	c.server = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	c.apiserver, err = startProcess("kube-apiserver", filepath.Join(binDir, "kube-apiserver"), c.logDir,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--cert-dir="+c.workPath("apiserver-certs"),
		"--tls-cert-file="+c.workPath("apiserver.crt"),
		"--tls-private-key-file="+c.workPath("apiserver.key"),
		"--client-ca-file="+c.caFile,
		"--token-auth-file="+c.workPath("tokens.csv"),
		"--authentication-token-webhook-config-file="+c.workPath("webhook.kubeconfig"),
		"--authentication-token-webhook-cache-ttl=0s",
		"--service-account-key-file="+c.workPath("sa.key"),
		"--service-account-signing-key-file="+c.workPath("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none", // the loopback address is not a valid endpoint
		"--kubelet-client-certificate="+c.workPath("apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+c.workPath("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority="+c.caFile,
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true",
		"--profiling=false",
	)
	return err
}

// connect builds the admin's client configuration (RESTConfig), its HTTP client and the control
// plane's own API client on it.
func (c *ControlPlane) connect() error {
	c.restCfg = &rest.Config{
		Host:            c.server,
		BearerToken:     c.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile},
		QPS:             100,
		Burst:           200,
	}
	var err error
	c.httpClient, err = rest.HTTPClientFor(c.restCfg)
	if err != nil {
		return err
	}
	c.api, err = newAPIClient(c.restCfg, c.httpClient)
	return err
}

// writeKubeconfigs writes the admin's kubeconfig (Kubeconfig) and the scheduler's and the
// controller manager's, each with its static token.
func (c *ControlPlane) writeKubeconfigs(toks staticTokens) error {
	c.kubeconfig = c.workPath("kubeconfig")
	if err := c.writeKubeconfig(c.kubeconfig, "admin", c.adminToken); err != nil {
		return err
	}
	if err := c.writeKubeconfig(c.workPath("scheduler.kubeconfig"), toks.scheduler.user, toks.scheduler.token); err != nil {
		return err
	}
	return c.writeKubeconfig(c.workPath("controller-manager.kubeconfig"), toks.controllerManager.user, toks.controllerManager.token)
}

// startControllers starts kube-scheduler and kube-controller-manager (with the controllers
// listed in controllers), without leader election or serving ports.
func (c *ControlPlane) startControllers(binDir string) error {
	sched, err := startProcess("kube-scheduler", filepath.Join(binDir, "kube-scheduler"), c.logDir,
		"--kubeconfig="+c.workPath("scheduler.kubeconfig"),
		"--leader-elect=false",
		"--secure-port=0",
	)
	if err != nil {
		return err
	}
	c.controllers = append(c.controllers, sched)
	kcm, err := startProcess("kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"), c.logDir,
		"--kubeconfig="+c.workPath("controller-manager.kubeconfig"),
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+c.workPath("sa.key"),
		"--root-ca-file="+c.caFile,
		"--use-service-account-credentials=false",
	)
	if err != nil {
		return err
	}
	c.controllers = append(c.controllers, kcm)
	return nil
}

// startNodes starts a sparkrpc-kubelet for each of NodeNames, the node with its static token in
// toks at the same index.
func (c *ControlPlane) startNodes(binDir string, ca *authority, toks []componentToken, o options) error {
	for i, name := range c.nodeNames {
		p, err := c.startNode(binDir, ca, name, toks[i], o)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, p)
	}
	return nil
}

// startNode writes node name's kubeconfig for tok and its serving certificate signed by ca, and
// starts its sparkrpc-kubelet with the capacity and pods' PATH prefix of o, its files in the
// folder of its name.
func (c *ControlPlane) startNode(binDir string, ca *authority, name string, tok componentToken, o options) (*process, error) {
	kc := c.workPath(name + ".kubeconfig")
	if err := c.writeKubeconfig(kc, tok.user, tok.token); err != nil {
		return nil, err
	}
	crt, key := c.workPath(name+".crt"), c.workPath(name+".key")
	if err := ca.issue(crt, key, name, nil, true, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{name, "localhost"}); err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + kc,
		"--node-name=" + name,
		"--root-dir=" + c.workPath(name),
		"--address=127.0.0.1",
		"--port=0",
		"--cpu=" + o.cpu,
		"--memory=" + o.memory,
		"--pods=" + strconv.Itoa(o.pods),
		"--tls-cert-file=" + crt,
		"--tls-private-key-file=" + key,
		"--client-ca-file=" + c.caFile,
	}
	if o.pathPrefix != "" {
		args = append(args, "--path-prefix="+o.pathPrefix)
	}
	for image, dir := range o.images {
		args = append(args, "--image="+image+"="+dir)
	}
	return startProcess(name, filepath.Join(binDir, "sparkrpc-kubelet"), c.logDir, args...)
}

// writeKubeconfig writes a kubeconfig for user with token, context ContextName, namespace default.
func (c *ControlPlane) writeKubeconfig(file, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: c.server, CertificateAuthority: c.caFile}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user, Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = ContextName
	return clientcmd.WriteToFile(*cfg, file)
}

// Server is the API server's URL, "https://127.0.0.1:PORT".
func (c *ControlPlane) Server() string { return c.server }

// CAFile is the file of the CA certificate that signed the API server's serving certificate.
func (c *ControlPlane) CAFile() string { return c.caFile }

// AdminToken is a bearer token of a cluster admin (group system:masters).
func (c *ControlPlane) AdminToken() string { return c.adminToken }

// Kubeconfig is the path of a kubeconfig for the admin token, context "sparkrpc-local",
// namespace default.
func (c *ControlPlane) Kubeconfig() string { return c.kubeconfig }

// LogDir is the folder of the components' logs.
func (c *ControlPlane) LogDir() string { return c.logDir }

// NodeNames are the names of the nodes.
func (c *ControlPlane) NodeNames() []string { return append([]string(nil), c.nodeNames...) }

// KeepLogs makes Stop keep the component logs (for example when a test failed); their folder is
// LogDir.
func (c *ControlPlane) KeepLogs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keepLogs = true
}

// RESTConfig is a client configuration for the admin token; each call returns a new copy. A
// clientset made from it (kubernetes.NewForConfig) shares the transport that client-go caches for
// the configuration with the control plane's own client, whose idle connections Stop closes.
func (c *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(c.restCfg) }

// Stop stops the nodes (which stop their pods), the controllers and the scheduler, the API server
// and then etcd, each with SIGTERM to its process group and SIGKILL if it has not ended in time,
// and removes the working files (and the logs, unless WithLogDir or KeepLogs). It returns an error
// when a component had to be killed or had failed; calling it again returns the same result.
func (c *ControlPlane) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.stopErr
	}
	c.stopped = true
	var errs []error
	stopAll := func(ps []*process, grace time.Duration) {
		var wg sync.WaitGroup
		errCh := make(chan error, len(ps))
		for _, p := range ps {
			if p == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errCh <- p.stop(grace)
			}()
		}
		wg.Wait()
		close(errCh)
		for err := range errCh {
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	stopAll(c.nodes, 20*time.Second)
	stopAll(c.controllers, 10*time.Second)
	stopAll([]*process{c.apiserver}, 20*time.Second)
	stopAll([]*process{c.etcd}, 10*time.Second)
	if c.webhook != nil {
		_ = c.webhook.Close()
	}
	if c.httpClient != nil {
		utilnet.CloseIdleConnectionsFor(c.httpClient.Transport)
	}
	if c.ownLogDir && c.keepLogs {
		// The default log folder is inside the work folder: move it out before that goes.
		if kept, err := os.MkdirTemp("", "sparkrpc-kube-logs-"); err == nil {
			if err := os.Rename(c.logDir, filepath.Join(kept, "logs")); err == nil {
				c.logDir = filepath.Join(kept, "logs")
			}
		}
	}
	if err := os.RemoveAll(c.work); err != nil {
		errs = append(errs, err)
	}
	c.stopErr = errors.Join(errs...)
	return c.stopErr
}
