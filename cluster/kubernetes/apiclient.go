package kubernetes

// client.go connects to the API server (Spark's SparkKubernetesClientFactory):
// kubeconfig rules, Spark's credential keys, in-cluster configuration in a
// driver pod, bounded requests; and it turns API errors into typed ones.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Sentinel errors. Match them with errors.Is; errors.As finds *APIError
// with the details.
var (
	// ErrUnreachable: the API server did not answer within the timeout.
	ErrUnreachable = errors.New("kubernetes: API server unreachable")
	// ErrUnauthorized: the API server rejected the credential (HTTP 401).
	ErrUnauthorized = errors.New("kubernetes: unauthorized")
	// ErrForbidden: RBAC refused the request (HTTP 403).
	ErrForbidden = errors.New("kubernetes: forbidden")
	// ErrNamespaceNotFound: the namespace does not exist.
	ErrNamespaceNotFound = errors.New("kubernetes: namespace not found")
	// ErrNotFound: the pod (or another object) does not exist.
	ErrNotFound = errors.New("kubernetes: not found")
	// ErrCredentials: a credential file or kubeconfig could not be read.
	ErrCredentials = errors.New("kubernetes: bad credentials configuration")
)

// apiClient is a connection to an API server with the credential it uses.
type apiClient struct {
	core coreV1
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
func (c *apiClient) CoreV1() coreV1 { return c.core }

// apiClientOptions say how to connect.
type apiClientOptions struct {
	// Server is the API server URL of the master (it overrides the kubeconfig's).
	Server string
	// InDriverPod uses the driver keys (spark.kubernetes.authenticate.driver.*,
	// spark.kubernetes.driver.*Timeout) and the pod's in-cluster
	// configuration (service account token and CA) when the API server is
	// the cluster's own.
	InDriverPod bool
}

// newAPIClient returns a client for conf's Kubernetes keys. Credentials come
// from, in order of precedence: Spark's keys
// (spark.kubernetes.authenticate.submission.* for submit,
// spark.kubernetes.authenticate.driver.* in a driver pod), the in-cluster
// configuration in a driver pod, then the kubeconfig (KUBECONFIG or
// ~/.kube/config, context spark.kubernetes.context). It does not contact
// the API server.
func newAPIClient(conf *actor.Conf, opts apiClientOptions) (*apiClient, error) {
	prefix, reqKey, connKey := KeyAuthSubmissionPrefix, KeySubmissionRequestTimeout, KeySubmissionConnectionTimeout
	if opts.InDriverPod {
		prefix, reqKey, connKey = KeyAuthDriverPrefix, KeyDriverRequestTimeout, KeyDriverConnectionTimeout
	}
	reqTimeout, err := conf.GetDuration(reqKey, "10000", time.Millisecond)
	if err != nil {
		return nil, wrapConf(err)
	}
	connTimeout, err := conf.GetDuration(connKey, "10000", time.Millisecond)
	if err != nil {
		return nil, wrapConf(err)
	}
	if reqTimeout <= 0 || connTimeout <= 0 {
		return nil, badConf(reqKey, conf.Get(reqKey, ""), "timeouts must be positive")
	}
	var cfg *rest.Config
	cred := ""
	if opts.InDriverPod {
		if ic, err := rest.InClusterConfig(); err == nil {
			cfg = ic
			cred = "the pod's service account token (in-cluster configuration)"
			if opts.Server != "" && !sameServer(opts.Server, ic.Host) {
				cfg.Host = opts.Server
			}
		}
	}
	if cfg == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		overrides := &clientcmd.ConfigOverrides{CurrentContext: conf.Get(KeyContext, ""), ClusterInfo: clientcmdAPICluster(opts.Server)}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
		cfg, err = cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("%w: kubeconfig (%s): %v", ErrCredentials, kubeconfigFiles(rules), err)
		}
		cred = describeKubeconfigCredential(cc, cfg, rules)
	}
	key := func(name string) (string, bool) { return conf.Lookup(prefix + name) }
	if v, ok := key(AuthCACertFile); ok {
		if _, err := os.Stat(v); err != nil {
			return nil, fmt.Errorf("%w: %s%s: %v", ErrCredentials, prefix, AuthCACertFile, err)
		}
		cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = v, nil
	}
	cert, hasCert := key(AuthClientCertFile)
	keyFile, hasKey := key(AuthClientKeyFile)
	if hasCert != hasKey {
		return nil, fmt.Errorf("%w: %s%s and %s%s go together", ErrCredentials, prefix, AuthClientCertFile, prefix, AuthClientKeyFile)
	}
	if hasCert {
		cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = cert, keyFile
		cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = nil, nil
		cfg.BearerToken, cfg.BearerTokenFile, cfg.ExecProvider, cfg.AuthProvider = "", "", nil, nil
		cred = "the client certificate " + cert + " (" + prefix + AuthClientCertFile + ")"
	}
	tok, hasTok := key(AuthOAuthToken)
	tokFile, hasTokFile := key(AuthOAuthTokenFile)
	if hasTok && hasTokFile {
		return nil, fmt.Errorf("%w: give %s%s or %s%s, not both", ErrCredentials, prefix, AuthOAuthToken, prefix, AuthOAuthTokenFile)
	}
	if hasTokFile {
		b, err := os.ReadFile(tokFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %s%s: %v", ErrCredentials, prefix, AuthOAuthTokenFile, err)
		}
		tok, hasTok = strings.TrimSpace(string(b)), true
		cred = "the OAuth token in " + tokFile + " (" + prefix + AuthOAuthTokenFile + ")"
	} else if hasTok {
		cred = "the OAuth token of " + prefix + AuthOAuthToken
	}
	if hasTok {
		cfg.BearerToken, cfg.BearerTokenFile, cfg.ExecProvider, cfg.AuthProvider = tok, "", nil, nil
		cfg.Username, cfg.Password = "", ""
		if !hasCert {
			cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile, cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = "", "", nil, nil
		}
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
	if cred == "" {
		cred = "no credential (anonymous)"
	}
	return &apiClient{core: core, Server: cfg.Host, Credential: cred, TimeoutKey: reqKey, Timeout: reqTimeout}, nil
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

// APIError is a failed API request.
type APIError struct {
	// Verb, Resource and Namespace say what was asked.
	Verb, Resource, Namespace string
	// Server and Credential say where and with what.
	Server, Credential string
	// Kind is one of the sentinel errors.
	Kind error
	// Err is the underlying error.
	Err error
	// hint completes the message.
	hint string
}

func (e *APIError) Error() string {
	where := e.Resource
	if e.Namespace != "" {
		where += " in namespace " + e.Namespace
	}
	msg := fmt.Sprintf("%v: %s %s at %s: %v", e.Kind, e.Verb, where, e.Server, e.Err)
	if e.hint != "" {
		msg += " (" + e.hint + ")"
	}
	return msg
}

// Unwrap returns the sentinel and the underlying error.
func (e *APIError) Unwrap() []error { return []error{e.Kind, e.Err} }

// apiError classifies err of verb on resource in namespace; nil stays nil.
func (c *apiClient) apiError(err error, verb, resource, namespace string) error {
	if err == nil {
		return nil
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return err
	}
	e := &APIError{Verb: verb, Resource: resource, Namespace: namespace, Server: c.Server, Credential: c.Credential, Err: err}
	var st apierrors.APIStatus
	switch {
	case apierrors.IsUnauthorized(err):
		e.Kind, e.hint = ErrUnauthorized, "HTTP 401: the API server rejected "+c.Credential
	case apierrors.IsForbidden(err):
		e.Kind, e.hint = ErrForbidden, fmt.Sprintf("HTTP 403: RBAC does not allow %s on %s in namespace %q for %s; see deploy/kubernetes/rbac.yaml",
			verb, resource, namespace, c.Credential)
	case apierrors.IsNotFound(err) && errors.As(err, &st) && st.Status().Details != nil && st.Status().Details.Kind == "namespaces":
		e.Kind, e.hint = ErrNamespaceNotFound, fmt.Sprintf("create it, or give another with %s", KeyNamespace)
	case apierrors.IsNotFound(err):
		e.Kind = ErrNotFound
	case isUnreachable(err):
		e.Kind, e.hint = ErrUnreachable, fmt.Sprintf("no answer within %s (%s)", c.Timeout, c.TimeoutKey)
	default:
		return fmt.Errorf("kubernetes: %s %s in namespace %s: %w", verb, resource, namespace, err)
	}
	return e
}

func isUnreachable(err error) bool {
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// CheckAccess makes one bounded request, to fail fast with a typed error
// when the API server is unreachable, rejects the credential, or the
// namespace does not exist (Forbidden on reading the namespace is not an
// error: the driver's role need not read namespaces).
func (c *apiClient) CheckAccess(ctx context.Context, namespace string) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	_, err := c.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return &APIError{Verb: "get", Resource: "namespaces/" + namespace, Server: c.Server, Credential: c.Credential, Kind: ErrNamespaceNotFound,
			Err: err, hint: fmt.Sprintf("create it, or give another with %s", KeyNamespace)}
	case apierrors.IsForbidden(err):
		// Check the pods instead, which the driver must be able to list.
		_, err = c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: LabelRole})
		return c.apiError(err, "list", "pods", namespace)
	}
	return c.apiError(err, "get", "namespaces/"+namespace, "")
}

func clientcmdAPICluster(server string) clientcmdapi.Cluster {
	return clientcmdapi.Cluster{Server: server}
}
