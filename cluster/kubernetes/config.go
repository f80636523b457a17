package kubernetes

// config.go holds the configuration keys of the Kubernetes cluster manager
// (Spark's names) and config, their parsed and validated values.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// Configuration keys, with Spark's names and defaults.
const (
	// KeyNamespace is the namespace of the driver and executor pods (default "default").
	KeyNamespace = "spark.kubernetes.namespace"
	// KeyContext is the kubeconfig context to use (default the current context).
	KeyContext = "spark.kubernetes.context"
	// KeyContainerImage is the image of the driver and executor pods (required).
	KeyContainerImage = "spark.kubernetes.container.image"
	// KeyExecutorContainerImage overrides KeyContainerImage for executors.
	KeyExecutorContainerImage = "spark.kubernetes.executor.container.image"
	// KeyDriverContainerImage overrides KeyContainerImage for the driver pod.
	KeyDriverContainerImage = "spark.kubernetes.driver.container.image"
	// KeyImagePullPolicy is the pods' image pull policy (default IfNotPresent).
	KeyImagePullPolicy = "spark.kubernetes.container.image.pullPolicy"
	// KeyExecutorPodNamePrefix is the executor pods' name prefix (default
	// the application's name with a random suffix, as Spark).
	KeyExecutorPodNamePrefix = "spark.kubernetes.executor.podNamePrefix"
	// KeyDriverPodName is the driver pod's name in cluster mode (default
	// <prefix>-driver); in a driver pod, the pod that owns the executors.
	KeyDriverPodName = "spark.kubernetes.driver.pod.name"
	// KeyServiceAccountName is the service account of the driver pod, and of
	// the executor pods unless KeyExecutorServiceAccountName is set.
	KeyServiceAccountName = "spark.kubernetes.authenticate.driver.serviceAccountName"
	// KeyExecutorServiceAccountName is the executor pods' service account.
	KeyExecutorServiceAccountName = "spark.kubernetes.authenticate.executor.serviceAccountName"
	// KeyExecutorLabelPrefix + NAME=VALUE labels the executor pods.
	KeyExecutorLabelPrefix = "spark.kubernetes.executor.label."
	// KeyExecutorAnnotationPrefix + NAME=VALUE annotates the executor pods.
	KeyExecutorAnnotationPrefix = "spark.kubernetes.executor.annotation."
	// KeyDriverLabelPrefix + NAME=VALUE labels the driver pod.
	KeyDriverLabelPrefix = "spark.kubernetes.driver.label."
	// KeyDriverAnnotationPrefix + NAME=VALUE annotates the driver pod.
	KeyDriverAnnotationPrefix = "spark.kubernetes.driver.annotation."
	// KeyNodeSelectorPrefix + NAME=VALUE is a node selector of all pods.
	KeyNodeSelectorPrefix = "spark.kubernetes.node.selector."
	// KeyMemoryOverheadFactor is the share of the memory added as overhead
	// to the pods' memory (default 0.1; at least 384 MiB).
	KeyMemoryOverheadFactor = "spark.kubernetes.memoryOverheadFactor"
	// KeyExecutorMemoryOverhead sets the executors' overhead in MiB (or a
	// size), instead of the factor.
	KeyExecutorMemoryOverhead = "spark.executor.memoryOverhead"
	// KeyDriverMemoryOverhead sets the driver pod's overhead.
	KeyDriverMemoryOverhead = "spark.driver.memoryOverhead"
	// KeyExecutorRequestCores is the executor pods' cpu request (default
	// spark.executor.cores).
	KeyExecutorRequestCores = "spark.kubernetes.executor.request.cores"
	// KeyExecutorLimitCores is the executor pods' cpu limit (default none).
	KeyExecutorLimitCores = "spark.kubernetes.executor.limit.cores"
	// KeyDriverRequestCores is the driver pod's cpu request (default spark.driver.cores).
	KeyDriverRequestCores = "spark.kubernetes.driver.request.cores"
	// KeyDriverLimitCores is the driver pod's cpu limit (default none).
	KeyDriverLimitCores = "spark.kubernetes.driver.limit.cores"
	// KeyBatchSize is how many executor pods are created per round (default 10).
	KeyBatchSize = "spark.kubernetes.allocation.batch.size"
	// KeyBatchDelay is the time between allocation rounds (default 1s).
	KeyBatchDelay = "spark.kubernetes.allocation.batch.delay"
	// KeyExecutorTimeout is how long an executor pod may stay pending (or
	// unseen after its creation) before it is deleted and replaced (default 600s).
	KeyExecutorTimeout = "spark.kubernetes.allocation.executor.timeout"
	// KeyMaxPendingPods bounds the executor pods pending at once (default unbounded).
	KeyMaxPendingPods = "spark.kubernetes.allocation.maxPendingPods"
	// KeyDriverReadinessTimeout is how long the allocator waits, at
	// application start, for the driver pod (cluster mode, or client mode
	// with KeyDriverPodName) to be Ready before it creates executor pods; on
	// timeout it logs a warning and creates them anyway (default 1s; a bare
	// number is seconds).
	KeyDriverReadinessTimeout = "spark.kubernetes.allocation.driver.readinessTimeout"
	// KeyDeleteOnTermination false keeps the executor pods after the
	// application (default true).
	KeyDeleteOnTermination = "spark.kubernetes.executor.deleteOnTermination"
	// KeySubmissionRequestTimeout bounds each API request of submit (default 10000 ms).
	KeySubmissionRequestTimeout = "spark.kubernetes.submission.requestTimeout"
	// KeySubmissionConnectionTimeout bounds connecting to the API server for
	// submit (default 10000 ms).
	KeySubmissionConnectionTimeout = "spark.kubernetes.submission.connectionTimeout"
	// KeyDriverRequestTimeout bounds each API request of a driver pod (default 10000 ms).
	KeyDriverRequestTimeout = "spark.kubernetes.driver.requestTimeout"
	// KeyDriverConnectionTimeout bounds connecting to the API server from a
	// driver pod (default 10000 ms).
	KeyDriverConnectionTimeout = "spark.kubernetes.driver.connectionTimeout"
	// KeyWaitAppCompletion false makes a cluster-mode submit return once the
	// driver pod runs (default true).
	KeyWaitAppCompletion = "spark.kubernetes.submission.waitAppCompletion"
	// KeyReportInterval is how often a cluster-mode submit prints the driver
	// pod's state while it waits (default 1s).
	KeyReportInterval = "spark.kubernetes.report.interval"
	// KeyAppKillPodDeletionGracePeriod is the grace period of --kill (default
	// the pod's own).
	KeyAppKillPodDeletionGracePeriod = "spark.kubernetes.appKillPodDeletionGracePeriod"
	// KeySubmitInDriver is set in a driver pod's configuration: the driver
	// runs in a pod (Spark's spark.kubernetes.submitInDriver).
	KeySubmitInDriver = "spark.kubernetes.submitInDriver"
	// KeyExecutable is the command the pods run (default "sparkrpc", looked
	// up on the image's PATH). Not a Spark key.
	KeyExecutable = "spark.sparkrpc.kubernetes.executable"
)

// Submission credential keys (KeyAuthSubmissionPrefix + name) and, for a
// driver pod in cluster mode, KeyAuthDriverPrefix + name.
const (
	KeyAuthSubmissionPrefix = "spark.kubernetes.authenticate.submission."
	KeyAuthDriverPrefix     = "spark.kubernetes.authenticate.driver."
	AuthOAuthToken          = "oauthToken"
	AuthOAuthTokenFile      = "oauthTokenFile"
	AuthCACertFile          = "caCertFile"
	AuthClientCertFile      = "clientCertFile"
	AuthClientKeyFile       = "clientKeyFile"
)

// Labels of the pods, as Spark sets them.
const (
	LabelAppSelector = "spark-app-selector"
	LabelAppName     = "spark-app-name"
	LabelRole        = "spark-role"
	LabelExecutorID  = "spark-exec-id"
	LabelProfileID   = "spark-resource-profile-id"
	RoleExecutor     = "executor"
	RoleDriver       = "driver"
	// EnvExecutorPodIP is the executor container's pod IP (Downward API).
	EnvExecutorPodIP = "SPARK_EXECUTOR_POD_IP"
	// ExecutorContainerName is the executor pods' container.
	ExecutorContainerName = "spark-kubernetes-executor"
	// DriverContainerName is the driver pod's container.
	DriverContainerName = "spark-kubernetes-driver"
	// DriverPort is the driver's RPC port in a driver pod (Spark's 7078).
	DriverPort = 7078
)

const minOverheadMiB = 384

// config is the parsed configuration of an application on Kubernetes.
type config struct {
	AppID, AppName string
	Namespace      string
	// ExecutorImage and DriverImage are the pods' images.
	ExecutorImage, DriverImage string
	PullPolicy                 string
	// PodNamePrefix prefixes executor pod names: <prefix>-exec-<id>.
	PodNamePrefix string
	// ExecutorCores, ExecutorMemoryMiB, ExecutorOverheadMiB size the executors.
	ExecutorCores                            int
	ExecutorMemoryMiB, ExecutorOverheadMiB   int64
	ExecutorRequestCores, ExecutorLimitCores string
	ExecutorLabels, ExecutorAnnotations      map[string]string
	NodeSelector                             map[string]string
	ServiceAccount, ExecutorServiceAccount   string
	NumExecutors                             int
	MaxExecutorFailures                      int
	BatchSize                                int
	BatchDelay, ExecutorTimeout              time.Duration
	MaxPendingPods                           int
	DeleteOnTermination                      bool
	Executable                               string
	// DriverReadinessTimeout bounds the wait for the driver pod's Ready
	// condition before the first executor pods are created.
	DriverReadinessTimeout time.Duration
	// AuthSecretName, when set, is the Kubernetes Secret holding the
	// application's spark.authenticate secret: executor pods mount it at
	// AuthSecretMountPath.
	AuthSecretName string
	// ExecutorConf is the configuration executor pods are started with
	// (--conf arguments): never a sensitive key.
	ExecutorConf map[string]string
}

// ErrInvalidConfig is matched by configuration errors of this package (with
// errors.Is); errors.As finds the *actor.ConfError naming the key.
var ErrInvalidConfig = errors.New("kubernetes: invalid configuration")

type confError struct{ *actor.ConfError }

func (e confError) Unwrap() []error { return []error{e.ConfError, ErrInvalidConfig} }

func badConf(key, value, why string) error {
	return confError{&actor.ConfError{Key: key, Value: value, Err: errors.New(why)}}
}

func wrapConf(err error) error {
	var ce *actor.ConfError
	if errors.As(err, &ce) {
		return confError{ce}
	}
	return err
}

var (
	dnsLabelRe    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelValueRe  = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	nonNameCharRe = regexp.MustCompile(`[^a-z0-9\-]`)
	dashesRe      = regexp.MustCompile(`-+`)
)

// maxPrefixLen keeps <prefix>-exec-<id> a valid DNS label (Spark's 47).
const maxPrefixLen = 47

// NewAppID returns a new Kubernetes application id, spark-<32 hex digits>
// (Spark's KubernetesConf.getKubernetesAppId).
func NewAppID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "spark-" + hex.EncodeToString(b[:])
}

// ResourceNamePrefix returns the default prefix of an application's pod
// and service names: its name and a unique suffix, lower-cased, with
// characters outside [a-z0-9-] turned into dashes (Spark's
// KubernetesConf.getResourceNamePrefix).
func ResourceNamePrefix(appName string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:]) + strconv.FormatInt(time.Now().UnixMilli()&0xFFFFFFFFFF, 16)
	s := sanitizeName(appName + "-" + id)
	if len(s) > maxPrefixLen {
		// Keep the unique suffix.
		s = strings.TrimLeft(s[len(s)-maxPrefixLen:], "-")
	}
	return s
}

func sanitizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = nonNameCharRe.ReplaceAllString(s, "-")
	s = dashesRe.ReplaceAllString(s, "-")
	s = strings.TrimPrefix(s, "-")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "x" + s[1:]
	}
	return s
}

// AppNameLabel returns the value of the spark-app-name label: the name
// sanitized as a DNS label of at most 63 characters (Spark's getAppNameLabel).
func AppNameLabel(appName string) string {
	s := strings.ToLower(strings.TrimSpace(appName))
	s = nonNameCharRe.ReplaceAllString(s, "-")
	s = dashesRe.ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-")
}

// parseConfig reads and validates the Kubernetes keys of conf for the
// application appID. Errors match ErrInvalidConfig and name the key.
func parseConfig(conf *actor.Conf, appID string) (*config, error) {
	c := &config{AppID: appID, AppName: conf.Get(cluster.KeyAppName, "sparkrpc")}
	for _, read := range []func(*actor.Conf) error{c.readPods, c.readExecutorResources, c.readExecutorMetadata, c.readAllocation} {
		if err := read(conf); err != nil {
			return nil, err
		}
	}
	c.Executable = conf.Get(KeyExecutable, "sparkrpc")
	return c, nil
}

// readPods reads where the pods run and what they run: the namespace, the
// images and their pull policy, and the pods' name prefix.
func (c *config) readPods(conf *actor.Conf) error {
	c.Namespace = conf.Get(KeyNamespace, "default")
	if !dnsLabelRe.MatchString(c.Namespace) || len(c.Namespace) > 63 {
		return badConf(KeyNamespace, c.Namespace, "not a valid namespace name (a DNS label)")
	}
	image := conf.Get(KeyContainerImage, "")
	c.ExecutorImage = conf.Get(KeyExecutorContainerImage, image)
	c.DriverImage = conf.Get(KeyDriverContainerImage, image)
	if c.ExecutorImage == "" {
		return confError{&actor.ConfError{Key: KeyContainerImage, Err: errors.New("must specify the executor container image (" +
			KeyContainerImage + " or " + KeyExecutorContainerImage + ")")}}
	}
	c.PullPolicy = conf.Get(KeyImagePullPolicy, "IfNotPresent")
	switch c.PullPolicy {
	case "Always", "IfNotPresent", "Never":
	default:
		return badConf(KeyImagePullPolicy, c.PullPolicy, "must be Always, IfNotPresent or Never")
	}
	if p, ok := conf.Lookup(KeyExecutorPodNamePrefix); ok {
		if len(p) > maxPrefixLen || !dnsLabelRe.MatchString(p) {
			return badConf(KeyExecutorPodNamePrefix, p, fmt.Sprintf("must be a DNS label of at most %d characters", maxPrefixLen))
		}
		c.PodNamePrefix = p
	} else {
		c.PodNamePrefix = ResourceNamePrefix(c.AppName)
	}
	return nil
}

// readExecutorResources reads the executor pods' cores and memory (with
// its overhead), and their CPU request and limit.
func (c *config) readExecutorResources(conf *actor.Conf) error {
	var err error
	if c.ExecutorCores, err = intAtLeast(conf, cluster.KeyExecutorCores, 1, 1); err != nil {
		return err
	}
	mem, err := conf.GetSizeAsBytes(cluster.KeyExecutorMemory, "1g", 1<<20)
	if err != nil {
		return wrapConf(err)
	}
	if mem < 1<<20 {
		return badConf(cluster.KeyExecutorMemory, conf.Get(cluster.KeyExecutorMemory, ""), "must be at least 1m")
	}
	c.ExecutorMemoryMiB = mem >> 20
	if c.ExecutorOverheadMiB, err = overheadMiB(conf, KeyExecutorMemoryOverhead, c.ExecutorMemoryMiB); err != nil {
		return err
	}
	c.ExecutorRequestCores = conf.Get(KeyExecutorRequestCores, strconv.Itoa(c.ExecutorCores))
	c.ExecutorLimitCores = conf.Get(KeyExecutorLimitCores, "")
	for _, q := range []struct{ key, v string }{{KeyExecutorRequestCores, c.ExecutorRequestCores}, {KeyExecutorLimitCores, c.ExecutorLimitCores}} {
		if q.v != "" {
			if err := checkQuantity(q.v); err != nil {
				return badConf(q.key, q.v, err.Error())
			}
		}
	}
	return nil
}

// readExecutorMetadata reads the executor pods' labels (none of Spark's
// own), annotations, node selector and the service accounts.
func (c *config) readExecutorMetadata(conf *actor.Conf) error {
	var err error
	if c.ExecutorLabels, err = prefixed(conf, KeyExecutorLabelPrefix, true); err != nil {
		return err
	}
	for _, reserved := range []string{LabelAppSelector, LabelRole, LabelExecutorID, LabelAppName, LabelProfileID} {
		if _, ok := c.ExecutorLabels[reserved]; ok {
			return badConf(KeyExecutorLabelPrefix+reserved, c.ExecutorLabels[reserved], "label "+reserved+" is reserved for Spark")
		}
	}
	if c.ExecutorAnnotations, err = prefixed(conf, KeyExecutorAnnotationPrefix, false); err != nil {
		return err
	}
	if c.NodeSelector, err = prefixed(conf, KeyNodeSelectorPrefix, true); err != nil {
		return err
	}
	c.ServiceAccount = conf.Get(KeyServiceAccountName, "")
	c.ExecutorServiceAccount = conf.Get(KeyExecutorServiceAccountName, "")
	return nil
}

// readAllocation reads how the allocator creates and deletes executor
// pods: how many, in which batches, how long it waits, how many failures it
// tolerates.
func (c *config) readAllocation(conf *actor.Conf) error {
	var err error
	if c.NumExecutors, err = intAtLeast(conf, cluster.KeyNumExecutors, 2, 0); err != nil {
		return err
	}
	if c.MaxExecutorFailures, err = conf.GetInt(cluster.KeyMaxExecutorFailures, max(3, 2*c.NumExecutors)); err != nil {
		return wrapConf(err)
	}
	if c.BatchSize, err = intAtLeast(conf, KeyBatchSize, 10, 1); err != nil {
		return err
	}
	if c.BatchDelay, err = positiveDuration(conf, KeyBatchDelay, "1s", time.Millisecond); err != nil {
		return err
	}
	if c.ExecutorTimeout, err = positiveDuration(conf, KeyExecutorTimeout, "600s", time.Millisecond); err != nil {
		return err
	}
	if c.MaxPendingPods, err = intAtLeast(conf, KeyMaxPendingPods, int(^uint32(0)>>1), 1); err != nil {
		return err
	}
	if c.DriverReadinessTimeout, err = positiveDuration(conf, KeyDriverReadinessTimeout, "1s", time.Second); err != nil {
		return err
	}
	if c.DeleteOnTermination, err = conf.GetBool(KeyDeleteOnTermination, true); err != nil {
		return wrapConf(err)
	}
	return nil
}

// intAtLeast reads the integer key (def when unset), which must be at
// least least.
func intAtLeast(conf *actor.Conf, key string, def, least int) (int, error) {
	n, err := conf.GetInt(key, def)
	if err != nil {
		return 0, wrapConf(err)
	}
	if n < least {
		return 0, badConf(key, strconv.Itoa(n), fmt.Sprintf("must be at least %d", least))
	}
	return n, nil
}

// positiveDuration reads the duration key (def when unset; a bare number
// is in unit), which must be positive.
func positiveDuration(conf *actor.Conf, key, def string, unit time.Duration) (time.Duration, error) {
	d, err := conf.GetDuration(key, def, unit)
	if err != nil {
		return 0, wrapConf(err)
	}
	if d <= 0 {
		return 0, badConf(key, conf.Get(key, ""), "must be positive")
	}
	return d, nil
}

// overheadMiB is Spark's memory overhead: key if set, else max(factor ×
// memory, 384 MiB).
func overheadMiB(conf *actor.Conf, key string, memMiB int64) (int64, error) {
	if v, ok := conf.Lookup(key); ok {
		n, err := actor.ParseSize(v, 1<<20)
		if err != nil || n < 0 {
			return 0, badConf(key, v, "must be a size such as 384m")
		}
		return n >> 20, nil
	}
	f := 0.1
	if v, ok := conf.Lookup(KeyMemoryOverheadFactor); ok {
		var err error
		f, err = strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f >= 1 {
			return 0, badConf(KeyMemoryOverheadFactor, v, "must be a number between 0 and 1 (exclusive)")
		}
	}
	return max(int64(f*float64(memMiB)), minOverheadMiB), nil
}

// prefixed returns the keys of conf under prefix, without it, as a map;
// label keys and values are checked as Kubernetes labels.
func prefixed(conf *actor.Conf, prefix string, label bool) (map[string]string, error) {
	m := map[string]string{}
	for k, v := range conf.All() {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if !validQualifiedName(name) {
			return nil, badConf(k, v, "the part after "+prefix+" must be a valid Kubernetes key name")
		}
		if label && (len(v) > 63 || !labelValueRe.MatchString(v)) {
			return nil, badConf(k, v, "not a valid label value")
		}
		m[name] = v
	}
	return m, nil
}

func validQualifiedName(s string) bool {
	prefix, name, ok := strings.Cut(s, "/")
	if !ok {
		name, prefix = prefix, ""
	} else if prefix == "" || len(prefix) > 253 || !dnsSubdomain.MatchString(prefix) {
		return false
	}
	return name != "" && len(name) <= 63 && labelValueRe.MatchString(name)
}
