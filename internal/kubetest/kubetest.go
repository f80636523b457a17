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

func (c *ControlPlane) start(ctx context.Context, binDir string, o options) error {
	bin := func(name string) string { return filepath.Join(binDir, name) }
	path := func(name string) string { return filepath.Join(c.work, name) }

	ca, err := newAuthority()
	if err != nil {
		return err
	}
	c.caFile = path("ca.crt")
	if err := os.WriteFile(c.caFile, ca.pem, 0o644); err != nil {
		return err
	}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)}
	svcNames := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if err := ca.issue(path("apiserver.crt"), path("apiserver.key"), "kube-apiserver", nil, true, loopback, svcNames); err != nil {
		return err
	}
	if err := ca.issue(path("apiserver-kubelet-client.crt"), path("apiserver-kubelet-client.key"), "kube-apiserver-kubelet-client", []string{"system:masters"}, false, nil, nil); err != nil {
		return err
	}
	if err := writeRSAKey(path("sa.key")); err != nil {
		return err
	}

	// Static tokens: the admin and every component. Tokens added later are answered by the webhook.
	c.adminToken = newToken()
	type tok struct{ token, user string }
	schedTok := tok{newToken(), "system:kube-scheduler"}
	kcmTok := tok{newToken(), "system:kube-controller-manager"}
	var csv strings.Builder
	fmt.Fprintf(&csv, "%s,admin,admin,\"system:masters\"\n", c.adminToken)
	// The components run as system:masters: the kube-controller-manager then needs no
	// per-controller service accounts, and the nodes' informers may list all secrets and config maps.
	for _, t := range []tok{schedTok, kcmTok} {
		fmt.Fprintf(&csv, "%s,%s,%s,\"system:masters\"\n", t.token, t.user, t.user)
	}
	var nodeToks []tok
	for i := 1; i <= o.nodes; i++ {
		name := fmt.Sprintf("sparkrpc-node-%d", i)
		c.nodeNames = append(c.nodeNames, name)
		t := tok{newToken(), "system:node:" + name}
		nodeToks = append(nodeToks, t)
		fmt.Fprintf(&csv, "%s,%s,%s,\"system:masters\"\n", t.token, t.user, t.user)
	}
	if err := os.WriteFile(path("tokens.csv"), []byte(csv.String()), 0o600); err != nil {
		return err
	}

	if err := c.startWebhook(ca, path("webhook.kubeconfig")); err != nil {
		return err
	}

	// etcd
	etcdPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	c.etcd, err = startProcess("etcd", bin("etcd"), c.logDir,
		"--data-dir="+path("etcd"),
		"--listen-client-urls="+etcdURL,
		"--listen-peer-urls=http://127.0.0.1:"+strconv.Itoa(peerPort),
		"--unsafe-no-fsync",
	)
	if err != nil {
		return err
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
		return err
	}

	// kube-apiserver
	apiPort, err := freePort()
	if err != nil {
		return err
	}
	c.server = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	c.apiserver, err = startProcess("kube-apiserver", bin("kube-apiserver"), c.logDir,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--cert-dir="+path("apiserver-certs"),
		"--tls-cert-file="+path("apiserver.crt"),
		"--tls-private-key-file="+path("apiserver.key"),
		"--client-ca-file="+c.caFile,
		"--token-auth-file="+path("tokens.csv"),
		"--authentication-token-webhook-config-file="+path("webhook.kubeconfig"),
		"--authentication-token-webhook-cache-ttl=0s",
		"--service-account-key-file="+path("sa.key"),
		"--service-account-signing-key-file="+path("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none", // the loopback address is not a valid endpoint
		"--kubelet-client-certificate="+path("apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+path("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority="+c.caFile,
		"--kubelet-preferred-address-types=InternalIP",
		"--allow-privileged=true",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	c.restCfg = &rest.Config{
		Host:            c.server,
		BearerToken:     c.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile},
		QPS:             100,
		Burst:           200,
	}
	c.httpClient, err = rest.HTTPClientFor(c.restCfg)
	if err != nil {
		return err
	}
	c.api, err = newAPIClient(c.restCfg, c.httpClient)
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, "kube-apiserver /readyz", []*process{c.etcd, c.apiserver}, func() bool {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return c.api.ready(rctx)
	}); err != nil {
		return err
	}

	// kubeconfigs
	c.kubeconfig = path("kubeconfig")
	if err := c.writeKubeconfig(c.kubeconfig, "admin", c.adminToken); err != nil {
		return err
	}
	if err := c.writeKubeconfig(path("scheduler.kubeconfig"), schedTok.user, schedTok.token); err != nil {
		return err
	}
	if err := c.writeKubeconfig(path("controller-manager.kubeconfig"), kcmTok.user, kcmTok.token); err != nil {
		return err
	}

	sched, err := startProcess("kube-scheduler", bin("kube-scheduler"), c.logDir,
		"--kubeconfig="+path("scheduler.kubeconfig"),
		"--leader-elect=false",
		"--secure-port=0",
	)
	if err != nil {
		return err
	}
	c.controllers = append(c.controllers, sched)
	kcm, err := startProcess("kube-controller-manager", bin("kube-controller-manager"), c.logDir,
		"--kubeconfig="+path("controller-manager.kubeconfig"),
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+path("sa.key"),
		"--root-ca-file="+c.caFile,
		"--use-service-account-credentials=false",
	)
	if err != nil {
		return err
	}
	c.controllers = append(c.controllers, kcm)

	for i, name := range c.nodeNames {
		kc := path(name + ".kubeconfig")
		if err := c.writeKubeconfig(kc, nodeToks[i].user, nodeToks[i].token); err != nil {
			return err
		}
		crt, key := path(name+".crt"), path(name+".key")
		if err := ca.issue(crt, key, name, nil, true, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{name, "localhost"}); err != nil {
			return err
		}
		args := []string{
			"--kubeconfig=" + kc,
			"--node-name=" + name,
			"--root-dir=" + path(name),
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
		p, err := startProcess(name, bin("sparkrpc-kubelet"), c.logDir, args...)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, p)
	}

	all := append([]*process{c.etcd, c.apiserver}, c.controllers...)
	all = append(all, c.nodes...)
	if err := c.waitFor(ctx, "the default ServiceAccount", all, func() bool {
		_, err := c.api.serviceAccount(ctx, metav1.NamespaceDefault, "default")
		return err == nil
	}); err != nil {
		return err
	}
	return c.waitFor(ctx, "nodes Ready and schedulable", all, func() bool {
		for _, name := range c.nodeNames {
			n, err := c.api.node(ctx, name)
			if err != nil || !schedulable(n) {
				return false
			}
		}
		return true
	})
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
