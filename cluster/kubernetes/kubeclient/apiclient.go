package kubeclient

// apiclient.go connects to the API server (Spark's
// SparkKubernetesClientFactory): kubeconfig rules, Spark's credential keys,
// in-cluster configuration in a driver pod, bounded requests; its requests
// go through the typed clients of corev1.go.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client is a connection to an API server with the credential it uses.
type Client struct {
	core  CoreV1
	authz AuthorizationV1
	// Server is the API server's URL.
	Server string
	// Credential describes the credential used (never its secret).
	Credential string
	// TimeoutKey is the configuration key bounding the requests.
	TimeoutKey string
	// Timeout is that bound.
	Timeout time.Duration
}

// CoreV1 returns the typed clients of the core/v1 resources.
func (c *Client) CoreV1() CoreV1 { return c.core }

// AuthorizationV1 returns the typed clients of the authorization/v1
// resources.
func (c *Client) AuthorizationV1() AuthorizationV1 { return c.authz }

// Options say how to connect.
type Options struct {
	// Server is the API server URL of the master (it overrides the kubeconfig's).
	Server string
	// InDriverPod uses the driver keys (spark.kubernetes.authenticate.driver.*,
	// spark.kubernetes.driver.*Timeout) and the pod's in-cluster
	// configuration (service account token and CA) when the API server is
	// the cluster's own.
	InDriverPod bool
}

// New returns a client for conf's Kubernetes keys. Credentials come
// from, in order of precedence: Spark's keys
// (spark.kubernetes.authenticate.submission.* for submit,
// spark.kubernetes.authenticate.driver.* in a driver pod), the in-cluster
// configuration in a driver pod, then the kubeconfig (KUBECONFIG or
// ~/.kube/config, context spark.kubernetes.context). It does not contact
// the API server.
func New(conf *actor.Conf, opts Options) (*Client, error) {
	keys := submissionClientKeys
	if opts.InDriverPod {
		keys = driverClientKeys
	}
	reqTimeout, connTimeout, err := keys.timeouts(conf)
	if err != nil {
		return nil, err
	}
	cfg, cred, err := defaultRESTConfig(conf, opts)
	if err != nil {
		return nil, err
	}
	if cred, err = keys.applyCredentials(conf, cfg, cred); err != nil {
		return nil, err
	}
	if opts.Server != "" {
		cfg.Host = opts.Server
	}
	if cfg.Host == "" {
		return nil, fmt.Errorf("%w: no API server: give --master k8s://https://HOST:PORT", ErrCredentials)
	}
	cfg.Timeout = reqTimeout
	cfg.Dial = (&net.Dialer{Timeout: connTimeout}).DialContext
	cfg.UserAgent = "sparkrpc"
	cfg.QPS, cfg.Burst = 50, 100
	core, err := newCoreV1(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCredentials, err)
	}
	authz, err := newAuthorizationV1(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCredentials, err)
	}
	if cred == "" {
		cred = "no credential (anonymous)"
	}
	return &Client{core: core, authz: authz, Server: cfg.Host, Credential: cred, TimeoutKey: keys.requestTimeout, Timeout: reqTimeout}, nil
}

// clientKeys are the configuration keys of one side's API client: submit's,
// or a driver pod's.
type clientKeys struct {
	// auth prefixes the credential keys (kubeconf.AuthOAuthToken, ...).
	auth string
	// requestTimeout and connectionTimeout bound requests and connecting.
	requestTimeout, connectionTimeout string
}

var (
	submissionClientKeys = clientKeys{kubeconf.KeyAuthSubmissionPrefix, kubeconf.KeySubmissionRequestTimeout, kubeconf.KeySubmissionConnectionTimeout}
	driverClientKeys     = clientKeys{kubeconf.KeyAuthDriverPrefix, kubeconf.KeyDriverRequestTimeout, kubeconf.KeyDriverConnectionTimeout}
)

// timeouts reads the request and connection timeouts (10000 ms each by
// default), which must be positive.
func (k clientKeys) timeouts(conf *actor.Conf) (request, connection time.Duration, err error) {
	if request, err = kubeconf.PositiveDuration(conf, k.requestTimeout, "10000", time.Millisecond); err != nil {
		return 0, 0, err
	}
	if connection, err = kubeconf.PositiveDuration(conf, k.connectionTimeout, "10000", time.Millisecond); err != nil {
		return 0, 0, err
	}
	return request, connection, nil
}

// defaultRESTConfig is the configuration before Spark's credential keys: in
// a driver pod the in-cluster configuration when there is one, otherwise
// the kubeconfig's; with a description of its credential ("" for none).
func defaultRESTConfig(conf *actor.Conf, opts Options) (*rest.Config, string, error) {
	if opts.InDriverPod {
		if cfg, err := rest.InClusterConfig(); err == nil {
			if opts.Server != "" && !sameServer(opts.Server, cfg.Host) {
				cfg.Host = opts.Server
			}
			return cfg, "the pod's service account token (in-cluster configuration)", nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	overrides := &clientcmd.ConfigOverrides{CurrentContext: conf.Get(kubeconf.KeyContext, ""), ClusterInfo: clientcmdAPICluster(opts.Server)}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%w: kubeconfig (%s): %v", ErrCredentials, kubeconfigFiles(rules), err)
	}
	return cfg, describeKubeconfigCredential(cc, cfg, rules), nil
}

// applyCredentials applies Spark's credential keys to cfg, which override
// its credential (described by cred); it returns the description of the
// credential used.
func (k clientKeys) applyCredentials(conf *actor.Conf, cfg *rest.Config, cred string) (string, error) {
	if err := k.applyCACert(conf, cfg); err != nil {
		return "", err
	}
	certCred, hasCert, err := k.applyClientCert(conf, cfg)
	if err != nil {
		return "", err
	}
	if hasCert {
		cred = certCred
	}
	tokenCred, err := k.applyOAuthToken(conf, cfg, hasCert)
	if err != nil {
		return "", err
	}
	if tokenCred != "" {
		cred = tokenCred
	}
	return cred, nil
}

// applyCACert makes cfg trust the CA of the caCertFile key, if set.
func (k clientKeys) applyCACert(conf *actor.Conf, cfg *rest.Config) error {
	v, ok := conf.Lookup(k.auth + kubeconf.AuthCACertFile)
	if !ok {
		return nil
	}
	if _, err := os.Stat(v); err != nil {
		return fmt.Errorf("%w: %s%s: %v", ErrCredentials, k.auth, kubeconf.AuthCACertFile, err)
	}
	cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = v, nil
	return nil
}

// applyClientCert makes cfg authenticate with the clientCertFile and
// clientKeyFile keys, if set (both or neither), instead of its own
// credential; it returns the description of that credential.
func (k clientKeys) applyClientCert(conf *actor.Conf, cfg *rest.Config) (cred string, ok bool, err error) {
	cert, hasCert := conf.Lookup(k.auth + kubeconf.AuthClientCertFile)
	keyFile, hasKey := conf.Lookup(k.auth + kubeconf.AuthClientKeyFile)
	if hasCert != hasKey {
		return "", false, fmt.Errorf("%w: %s%s and %s%s go together", ErrCredentials, k.auth, kubeconf.AuthClientCertFile, k.auth, kubeconf.AuthClientKeyFile)
	}
	if !hasCert {
		return "", false, nil
	}
	cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = cert, keyFile
	cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = nil, nil
	cfg.BearerToken, cfg.BearerTokenFile, cfg.ExecProvider, cfg.AuthProvider = "", "", nil, nil
	return "the client certificate " + cert + " (" + k.auth + kubeconf.AuthClientCertFile + ")", true, nil
}

// applyOAuthToken makes cfg authenticate with the token of the oauthToken
// key or of the file the oauthTokenFile key names (not both), if either is
// set, instead of its own credential (but for a client certificate of
// Spark's keys: hasCert); it returns the description of that credential,
// or "".
func (k clientKeys) applyOAuthToken(conf *actor.Conf, cfg *rest.Config, hasCert bool) (string, error) {
	tok, hasTok := conf.Lookup(k.auth + kubeconf.AuthOAuthToken)
	tokFile, hasTokFile := conf.Lookup(k.auth + kubeconf.AuthOAuthTokenFile)
	if hasTok && hasTokFile {
		return "", fmt.Errorf("%w: give %s%s or %s%s, not both", ErrCredentials, k.auth, kubeconf.AuthOAuthToken, k.auth, kubeconf.AuthOAuthTokenFile)
	}
	cred := ""
	switch {
	case hasTokFile:
		b, err := os.ReadFile(tokFile)
		if err != nil {
			return "", fmt.Errorf("%w: %s%s: %v", ErrCredentials, k.auth, kubeconf.AuthOAuthTokenFile, err)
		}
		tok = strings.TrimSpace(string(b))
		cred = "the OAuth token in " + tokFile + " (" + k.auth + kubeconf.AuthOAuthTokenFile + ")"
	case hasTok:
		cred = "the OAuth token of " + k.auth + kubeconf.AuthOAuthToken
	default:
		return "", nil
	}
	cfg.BearerToken, cfg.BearerTokenFile, cfg.ExecProvider, cfg.AuthProvider = tok, "", nil, nil
	cfg.Username, cfg.Password = "", ""
	if !hasCert {
		cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile, cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = "", "", nil, nil
	}
	return cred, nil
}

func sameServer(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host == ub.Host
}

func kubeconfigFiles(rules *clientcmd.ClientConfigLoadingRules) string {
	if rules.ExplicitPath != "" {
		return rules.ExplicitPath
	}
	return strings.Join(rules.Precedence, string(os.PathListSeparator))
}

func describeKubeconfigCredential(cc clientcmd.ClientConfig, cfg *rest.Config, rules *clientcmd.ClientConfigLoadingRules) string {
	raw, err := cc.RawConfig()
	where := "kubeconfig " + kubeconfigFiles(rules)
	if err == nil {
		ctxName := raw.CurrentContext
		if c, ok := raw.Contexts[ctxName]; ok {
			where += fmt.Sprintf(", context %q, user %q", ctxName, c.AuthInfo)
		}
	}
	switch {
	case cfg.BearerToken != "" || cfg.BearerTokenFile != "":
		return "the bearer token of " + where
	case cfg.CertFile != "" || len(cfg.CertData) > 0:
		return "the client certificate of " + where
	case cfg.ExecProvider != nil:
		return "the exec credential plugin of " + where
	case cfg.Username != "":
		return "the basic-auth user of " + where
	}
	return ""
}

// CheckAccess makes one bounded request, to fail fast with a typed error
// when the API server is unreachable, rejects the credential, or the
// namespace does not exist (Forbidden on reading the namespace is not an
// error: the driver's role need not read namespaces).
func (c *Client) CheckAccess(ctx context.Context, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	_, err := c.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return &APIError{Verb: "get", Resource: "namespaces/" + namespace, Server: c.Server, Credential: c.Credential, Kind: ErrNamespaceNotFound,
			Err: err, hint: fmt.Sprintf("create it, or give another with %s", kubeconf.KeyNamespace)}
	case apierrors.IsForbidden(err):
		// Check the pods instead, which the driver must be able to list.
		_, err = c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: kubeconf.LabelRole})
		return c.APIError(err, "list", "pods", namespace)
	}
	return c.APIError(err, "get", "namespaces/"+namespace, "")
}

func clientcmdAPICluster(server string) clientcmdapi.Cluster {
	return clientcmdapi.Cluster{Server: server}
}
