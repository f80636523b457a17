package kubeconf

// keys.go holds the configuration keys of the Kubernetes cluster manager,
// with Spark's names and defaults.

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
	// KeyExecutable is the command the pods run, looked up on the image's
	// PATH: by default the file name of the submitted program (the primary
	// resource), or "sparkrpc" for the applications compiled into it. Not a
	// Spark key.
	KeyExecutable = "spark.sparkrpc.kubernetes.executable"
	// KeySubmissionDryRun false skips the checks submit makes before it
	// creates anything: a dry run (DryRun: All) of the driver pod (cluster
	// mode) and of one executor pod, and (cluster mode) the access review
	// of the driver's service account (default true). Not a Spark key.
	KeySubmissionDryRun = "spark.sparkrpc.kubernetes.submission.dryRun"
	// KeyDriverServiceHost says how a driver pod's executors reach it:
	// "auto" (default) by its headless service's DNS name
	// <service>.<namespace>.svc when the pod's resolver searches a cluster
	// domain and the name resolves, else by the pod's IP; "true" by the
	// name always; "false" by the pod's IP. spark.driver.host, when set,
	// wins. Not a Spark key (Spark always uses the name).
	KeyDriverServiceHost = "spark.sparkrpc.kubernetes.driver.serviceHost"
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

// Keys that shape the pods of one role (spark.kubernetes.driver.* or
// spark.kubernetes.executor.*), with Spark's names; see RoleKeys.
const (
	// KeyDriverPodTemplateFile is a file (YAML or JSON) of a Pod that is
	// the base of the driver pod.
	KeyDriverPodTemplateFile = "spark.kubernetes.driver.podTemplateFile"
	// KeyExecutorPodTemplateFile is a file (YAML or JSON) of a Pod that is
	// the base of the executor pods.
	KeyExecutorPodTemplateFile = "spark.kubernetes.executor.podTemplateFile"
	// KeyDriverPodTemplateContainerName names the driver's container in
	// the driver's template (default its first container).
	KeyDriverPodTemplateContainerName = "spark.kubernetes.driver.podTemplateContainerName"
	// KeyExecutorPodTemplateContainerName names the executor's container
	// in the executors' template (default its first container).
	KeyExecutorPodTemplateContainerName = "spark.kubernetes.executor.podTemplateContainerName"
	// KeyImagePullSecrets is the pods' image pull secrets, comma-separated
	// names of Secrets of the namespace.
	KeyImagePullSecrets = "spark.kubernetes.container.image.pullSecrets"
	// KeySchedulerName is the pods' scheduler (default the cluster's).
	KeySchedulerName = "spark.kubernetes.scheduler.name"
	// KeyDriverEnvPrefix + NAME=VALUE sets an environment variable of the
	// driver pod's container.
	KeyDriverEnvPrefix = "spark.kubernetes.driverEnv."
	// KeyExecutorEnvPrefix + NAME=VALUE sets an environment variable of the
	// executor pods' container.
	KeyExecutorEnvPrefix = "spark.executorEnv."
)

// RoleKeys are the keys, or key prefixes, of one role's pods.
type RoleKeys struct {
	// Role is RoleDriver or RoleExecutor.
	Role string
	// TemplateFile and TemplateContainerName: the pod template.
	TemplateFile, TemplateContainerName string
	// VolumesPrefix + TYPE.NAME.mount.{path,readOnly,subPath} and
	// + TYPE.NAME.options.OPTION mount a volume (TYPE hostPath, emptyDir or
	// persistentVolumeClaim).
	VolumesPrefix string
	// SecretsPrefix + NAME=PATH mounts Secret NAME at PATH.
	SecretsPrefix string
	// SecretKeyRefPrefix + ENV=NAME:KEY sets variable ENV to key KEY of
	// Secret NAME.
	SecretKeyRefPrefix string
	// EnvPrefix + NAME=VALUE sets variable NAME.
	EnvPrefix string
	// NodeSelectorPrefix + NAME=VALUE is a node selector of the role's
	// pods, on top of KeyNodeSelectorPrefix's.
	NodeSelectorPrefix string
	// SchedulerName overrides KeySchedulerName.
	SchedulerName string
}

// DriverKeys and ExecutorKeys are the keys of the driver's and the
// executors' pods.
var (
	DriverKeys   = roleKeys(RoleDriver, KeyDriverPodTemplateFile, KeyDriverPodTemplateContainerName, KeyDriverEnvPrefix)
	ExecutorKeys = roleKeys(RoleExecutor, KeyExecutorPodTemplateFile, KeyExecutorPodTemplateContainerName, KeyExecutorEnvPrefix)
)

func roleKeys(role, template, container, env string) RoleKeys {
	p := "spark.kubernetes." + role + "."
	return RoleKeys{Role: role, TemplateFile: template, TemplateContainerName: container,
		VolumesPrefix: p + "volumes.", SecretsPrefix: p + "secrets.", SecretKeyRefPrefix: p + "secretKeyRef.",
		EnvPrefix: env, NodeSelectorPrefix: p + "node.selector.", SchedulerName: p + "scheduler.name"}
}
