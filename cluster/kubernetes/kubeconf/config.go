package kubeconf

// config.go holds Config, the parsed and validated values of the
// configuration keys of an application on Kubernetes.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"k8s.io/apimachinery/pkg/api/resource"
)

const minOverheadMiB = 384

// Config is the parsed configuration of an application on Kubernetes.
type Config struct {
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
	// Driver and Executor are the shapes of the driver pod and of the
	// executor pods (templates, volumes, secrets, environment, ...).
	Driver, Executor PodShape
	// ReportInterval is how often a cluster-mode submit prints the driver
	// pod's state (spark.kubernetes.report.interval).
	ReportInterval time.Duration
}

// Parse reads and validates the Kubernetes keys of conf for the
// application appID. Errors match ErrInvalidConfig and name the key.
func Parse(conf *actor.Conf, appID string) (*Config, error) {
	c := &Config{AppID: appID, AppName: conf.Get(cluster.KeyAppName, "sparkrpc")}
	for _, read := range []func(*actor.Conf) error{c.readPods, c.readExecutorResources, c.readExecutorMetadata, c.readAllocation, c.readShapes, c.readDriverPod} {
		if err := read(conf); err != nil {
			return nil, err
		}
	}
	c.Executable = conf.Get(KeyExecutable, "sparkrpc")
	return c, nil
}

// readPods reads where the pods run and what they run: the namespace, the
// images and their pull policy, and the pods' name prefix.
func (c *Config) readPods(conf *actor.Conf) error {
	c.Namespace = conf.Get(KeyNamespace, "default")
	if !dnsLabelRe.MatchString(c.Namespace) || len(c.Namespace) > 63 {
		return Invalid(KeyNamespace, c.Namespace, "not a valid namespace name (a DNS label)")
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
		return Invalid(KeyImagePullPolicy, c.PullPolicy, "must be Always, IfNotPresent or Never")
	}
	if p, ok := conf.Lookup(KeyExecutorPodNamePrefix); ok {
		if len(p) > MaxPrefixLen || !dnsLabelRe.MatchString(p) {
			return Invalid(KeyExecutorPodNamePrefix, p, fmt.Sprintf("must be a DNS label of at most %d characters", MaxPrefixLen))
		}
		c.PodNamePrefix = p
	} else {
		c.PodNamePrefix = ResourceNamePrefix(c.AppName)
	}
	return nil
}

// readExecutorResources reads the executor pods' cores and memory (with
// its overhead), and their CPU request and limit.
func (c *Config) readExecutorResources(conf *actor.Conf) error {
	var err error
	if c.ExecutorCores, err = intAtLeast(conf, cluster.KeyExecutorCores, 1, 1); err != nil {
		return err
	}
	mem, err := conf.GetSizeAsBytes(cluster.KeyExecutorMemory, "1g", 1<<20)
	if err != nil {
		return WrapInvalid(err)
	}
	if mem < 1<<20 {
		return Invalid(cluster.KeyExecutorMemory, conf.Get(cluster.KeyExecutorMemory, ""), "must be at least 1m")
	}
	c.ExecutorMemoryMiB = mem >> 20
	if c.ExecutorOverheadMiB, err = OverheadMiB(conf, KeyExecutorMemoryOverhead, c.ExecutorMemoryMiB); err != nil {
		return err
	}
	c.ExecutorRequestCores = conf.Get(KeyExecutorRequestCores, strconv.Itoa(c.ExecutorCores))
	c.ExecutorLimitCores = conf.Get(KeyExecutorLimitCores, "")
	for _, q := range []struct{ key, v string }{{KeyExecutorRequestCores, c.ExecutorRequestCores}, {KeyExecutorLimitCores, c.ExecutorLimitCores}} {
		if q.v != "" {
			if err := CheckQuantity(q.v); err != nil {
				return Invalid(q.key, q.v, err.Error())
			}
		}
	}
	return nil
}

// readExecutorMetadata reads the executor pods' labels (none of Spark's
// own), annotations, node selector and the service accounts.
func (c *Config) readExecutorMetadata(conf *actor.Conf) error {
	var err error
	if c.ExecutorLabels, err = Labels(conf, KeyExecutorLabelPrefix); err != nil {
		return err
	}
	for _, reserved := range []string{LabelAppSelector, LabelRole, LabelExecutorID, LabelAppName, LabelProfileID} {
		if _, ok := c.ExecutorLabels[reserved]; ok {
			return Invalid(KeyExecutorLabelPrefix+reserved, c.ExecutorLabels[reserved], "label "+reserved+" is reserved for Spark")
		}
	}
	if c.ExecutorAnnotations, err = Annotations(conf, KeyExecutorAnnotationPrefix); err != nil {
		return err
	}
	if c.NodeSelector, err = Labels(conf, KeyNodeSelectorPrefix); err != nil {
		return err
	}
	c.ServiceAccount = conf.Get(KeyServiceAccountName, "")
	c.ExecutorServiceAccount = conf.Get(KeyExecutorServiceAccountName, "")
	return nil
}

// readAllocation reads how the allocator creates and deletes executor
// pods: how many, in which batches, how long it waits, how many failures it
// tolerates.
func (c *Config) readAllocation(conf *actor.Conf) error {
	var err error
	if c.NumExecutors, err = intAtLeast(conf, cluster.KeyNumExecutors, 2, 0); err != nil {
		return err
	}
	if c.MaxExecutorFailures, err = cluster.MaxExecutorFailures(conf, c.NumExecutors); err != nil {
		return WrapInvalid(err)
	}
	if c.BatchSize, err = intAtLeast(conf, KeyBatchSize, 10, 1); err != nil {
		return err
	}
	if c.BatchDelay, err = PositiveDuration(conf, KeyBatchDelay, "1s", time.Millisecond); err != nil {
		return err
	}
	if c.ExecutorTimeout, err = PositiveDuration(conf, KeyExecutorTimeout, "600s", time.Millisecond); err != nil {
		return err
	}
	if c.MaxPendingPods, err = intAtLeast(conf, KeyMaxPendingPods, int(^uint32(0)>>1), 1); err != nil {
		return err
	}
	if c.DriverReadinessTimeout, err = PositiveDuration(conf, KeyDriverReadinessTimeout, "1s", time.Second); err != nil {
		return err
	}
	if c.DeleteOnTermination, err = conf.GetBool(KeyDeleteOnTermination, true); err != nil {
		return WrapInvalid(err)
	}
	return nil
}

// readShapes reads the shapes of the driver pod and of the executor pods.
func (c *Config) readShapes(conf *actor.Conf) error {
	var err error
	if c.Driver, err = ParseShape(conf, DriverKeys); err != nil {
		return err
	}
	c.Executor, err = ParseShape(conf, ExecutorKeys)
	return err
}

// readDriverPod reads the keys of a driver pod that submit passes on to
// it, so that a bad value is refused at submit rather than by the driver
// pod once it runs: its API client's timeouts, how its executors reach
// it, and how often submit reports its state.
func (c *Config) readDriverPod(conf *actor.Conf) error {
	for _, key := range []string{KeyDriverRequestTimeout, KeyDriverConnectionTimeout} {
		if _, err := PositiveDuration(conf, key, "10000", time.Millisecond); err != nil {
			return err
		}
	}
	switch v := conf.Get(KeyDriverServiceHost, "auto"); v {
	case "auto", "true", "false":
	default:
		return Invalid(KeyDriverServiceHost, v, "must be auto, true or false")
	}
	var err error
	c.ReportInterval, err = PositiveDuration(conf, KeyReportInterval, "1s", time.Millisecond)
	return err
}

// intAtLeast reads the integer key (def when unset), which must be at
// least least.
func intAtLeast(conf *actor.Conf, key string, def, least int) (int, error) {
	n, err := conf.GetInt(key, def)
	if err != nil {
		return 0, WrapInvalid(err)
	}
	if n < least {
		return 0, Invalid(key, strconv.Itoa(n), fmt.Sprintf("must be at least %d", least))
	}
	return n, nil
}

// PositiveDuration reads the duration key (def when unset; a bare number
// is in unit), which must be positive: a bad value is an error naming the
// key that matches ErrInvalidConfig.
func PositiveDuration(conf *actor.Conf, key, def string, unit time.Duration) (time.Duration, error) {
	d, err := conf.GetDuration(key, def, unit)
	if err != nil {
		return 0, WrapInvalid(err)
	}
	if d <= 0 {
		return 0, Invalid(key, conf.Get(key, ""), "must be positive")
	}
	return d, nil
}

// OverheadMiB is Spark's memory overhead of a pod of memMiB: key
// (spark.executor.memoryOverhead or spark.driver.memoryOverhead) if set,
// else max(spark.kubernetes.memoryOverheadFactor × memory, 384 MiB).
func OverheadMiB(conf *actor.Conf, key string, memMiB int64) (int64, error) {
	if v, ok := conf.Lookup(key); ok {
		n, err := actor.ParseSize(v, 1<<20)
		if err != nil || n < 0 {
			return 0, Invalid(key, v, "must be a size such as 384m")
		}
		return n >> 20, nil
	}
	f := 0.1
	if v, ok := conf.Lookup(KeyMemoryOverheadFactor); ok {
		var err error
		f, err = strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f >= 1 {
			return 0, Invalid(KeyMemoryOverheadFactor, v, "must be a number between 0 and 1 (exclusive)")
		}
	}
	return max(int64(f*float64(memMiB)), minOverheadMiB), nil
}

// Labels returns the labels the keys of conf under prefix give (each
// prefix+NAME=VALUE), checked as Kubernetes labels.
func Labels(conf *actor.Conf, prefix string) (map[string]string, error) {
	return prefixed(conf, prefix, true)
}

// Annotations returns the annotations the keys of conf under prefix give
// (each prefix+NAME=VALUE).
func Annotations(conf *actor.Conf, prefix string) (map[string]string, error) {
	return prefixed(conf, prefix, false)
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
			return nil, Invalid(k, v, "the part after "+prefix+" must be a valid Kubernetes key name")
		}
		if label && (len(v) > 63 || !labelValueRe.MatchString(v)) {
			return nil, Invalid(k, v, "not a valid label value")
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

// CheckQuantity checks that s is a Kubernetes quantity (such as "500m" or
// "2" cores).
func CheckQuantity(s string) error {
	_, err := resource.ParseQuantity(s)
	return err
}
