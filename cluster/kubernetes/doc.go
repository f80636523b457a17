// Package kubernetes runs sparkrpc applications on Kubernetes, as Spark's
// resource-managers/kubernetes module does: `sparkrpc submit --master
// k8s://https://HOST:PORT` (k8s://HOST:PORT means https).
//
// # Client mode
//
// The driver runs in the submitting process and listens on the address of
// this machine on the route to the API server (spark.driver.host overrides
// it); pods must be able to reach it. Its executors run in pods named
// <spark.kubernetes.executor.podNamePrefix>-exec-<id>, labelled
// spark-app-selector=<app id>, spark-app-name, spark-role=executor and
// spark-exec-id=<id>, with requests (and memory limits) of
// spark.executor.cores and spark.executor.memory plus the overhead
// (spark.executor.memoryOverhead, or spark.kubernetes.memoryOverheadFactor ×
// memory, at least 384 MiB). The container runs
//
//	sparkrpc executor --driver-url URL --executor-id ID --hostname $(SPARK_EXECUTOR_POD_IP) --cores N --app-id APP [--conf K=V]...
//
// with SPARK_EXECUTOR_POD_IP from the Downward API (status.podIP), Spark's
// executor attributes as SPARK_EXECUTOR_ATTRIBUTE_{APP_ID,EXECUTOR_ID,
// HOSTNAME,KUBERNETES_NAMESPACE,KUBERNETES_POD_NAME} (the last three from
// the Downward API), which it registers with, and as
// SPARK_LOG_URL_LOG its log link: the driver UI's
// /executors/logs/?id=<id>&start=-4096, which reads the pod's log through
// the API server (executorlogs.go; the pod is found by the application's
// labels and spark-exec-id, never by a name the request gives; the driver's
// account needs get on pods/log, else the link answers 502 naming it). As
// --conf, the executor gets the driver's startup keys an executor needs before it can reach
// the driver (spark.auth*, spark.network.*, spark.rpc.*, spark.ssl.*), never
// a sensitive one.
//
// # Authentication
//
// With spark.authenticate=true, submit takes the secret it is given
// (spark.authenticate.secret, or the file spark.authenticate.secret.file
// names) or, as Spark on Kubernetes, generates one for the application
// (32 random bytes, hex; in client mode it stays in the driver's memory).
// It creates a Kubernetes Secret <prefix>-auth-secret (labels
// spark-app-selector and spark-app-name) holding it under the key
// auth-secret; in cluster mode the driver pod becomes its owner, so that it
// is collected with the pod, and in client mode the driver deletes it at
// the end. The driver pod (cluster mode) and the executor pods mount it
// (volume spark-auth-secret, mode 0400) at /var/run/secrets/sparkrpc/auth,
// and their configuration says
// spark.authenticate.secret.file=/var/run/secrets/sparkrpc/auth/auth-secret;
// the driver pod also gets spark.sparkrpc.kubernetes.authenticate.secretName
// to mount the same Secret in its executor pods. The secret's value is never
// in a pod spec (arguments, environment, annotations), a ConfigMap or a log.
//
// More generally, keys that spark.redaction.regex matches (Spark's default
// (?i)secret|password|token|access[.]?key is always applied too; keys ending
// in "file" name files and pass) never reach a pod's arguments: the driver
// pod does not get them, and submit prints their names. The exception is
// spark.kubernetes.authenticate.driver.oauthToken, which, as in Spark, goes
// into the same Secret (key driver-oauth-token, mounted by the driver pod
// alone) and reaches the driver as
// spark.kubernetes.authenticate.driver.oauthTokenFile.
//
// # Pod shape and least privilege
//
// Package podspec builds both roles' pods as Spark's features/ steps do,
// from the role's pod template (spark.kubernetes.{driver,executor}.
// podTemplateFile, a Pod in YAML or JSON; Spark's container is the one
// spark.kubernetes.{driver,executor}.podTemplateContainerName names, the
// first by default, and the others are kept as sidecars). sparkrpc's own
// fields win over the template's where Spark's do (name, namespace, the
// labels and annotations it sets, Spark's container's name, image, command,
// arguments, variables and resources, owner references, restart policy
// Never); the template's other labels, annotations, tolerations, affinity,
// volumes, security context, node selector entries and containers are
// kept. Then come, per role: every pod's emptyDir local directory
// (/var/data/spark-local-dir-1, SPARK_LOCAL_DIRS, the container's working
// directory unless the template sets one: its one writable place);
// spark.kubernetes.{driver,executor}.volumes.{hostPath,emptyDir,
// persistentVolumeClaim}.NAME.mount.{path,readOnly,subPath} with
// .options.{path,type} (hostPath), .options.{medium,sizeLimit} (emptyDir) and
// .options.claimName (an existing claim; claims made on demand are not
// supported); spark.kubernetes.{driver,executor}.secrets.NAME=PATH (Secret
// NAME mounted read-only at PATH) and .secretKeyRef.ENV=NAME:KEY;
// spark.kubernetes.driverEnv.NAME and spark.executorEnv.NAME (submit
// refuses one that spark.redaction.regex matches, whose value would be in
// the pod's spec: use secretKeyRef);
// spark.kubernetes.container.image.pullSecrets; the node selector
// spark.kubernetes.node.selector.* with spark.kubernetes.{driver,executor}.
// node.selector.* on top; spark.kubernetes.scheduler.name (or the role's
// spark.kubernetes.{driver,executor}.scheduler.name).
//
// Least privilege is the default. Executors never call the API server, so
// unless spark.kubernetes.authenticate.executor.serviceAccountName gives
// them an account of their own they mount no service account token
// (automountServiceAccountToken: false; the pod still names the driver's
// account, as in Spark, for its image pull secrets). Both roles run with
// PodSecurity's "restricted" security context where the template sets
// none: the pod runs as user and group 65532 (the distroless nonroot user
// of sparkrpc's image, also its fsGroup), with runAsNonRoot and the
// RuntimeDefault seccomp profile; Spark's container has no privilege
// escalation, a read-only root file system and every capability dropped.
// No key turns this off: a template that sets a security context, even an
// empty one (securityContext: {} on the pod, on Spark's container, or
// both), keeps its own there; a user it names on one level (runAsUser,
// runAsNonRoot) is not contradicted by the other's. deploy/kubernetes/rbac.yaml grants the
// driver's account only what a driver does: pods (create, get, list, watch,
// delete, deletecollection), pods/log (get, for its UI's executor log
// links), for a client-mode driver in a pod with spark.authenticate,
// secrets (create, delete), and events (create, for the Events the driver
// posts on its pod).
//
// In cluster mode the executors' template, a file of the submitting
// machine, reaches the driver as an annotation of the driver pod
// (sparkrpc.io/executor-pod-template) that a Downward API volume mounts at
// /opt/spark/pod-template/pod-spec-template.yml, the file its
// spark.kubernetes.executor.podTemplateFile then names; the driver's own
// template file is not passed on.
//
// # Allocation
//
// The allocator (package executorpods) is the driver's
// endpoints.ClusterManager (Spark's ExecutorPodsAllocator and
// ExecutorPodsLifecycleManager). An informer (client-go's tools/cache, on a
// list and watch of the pods client) keeps a snapshot of the application's executor pods (label selector
// spark-app-selector=<app id>,spark-role=executor; an expired watch is
// relisted by the informer) and every event, or every
// spark.kubernetes.allocation.batch.delay, triggers a round: decide (plan.go,
// free of I/O) says which pods to create (at most
// spark.kubernetes.allocation.batch.size a round, at most
// spark.kubernetes.allocation.maxPendingPods pending), which to delete (ended
// pods, pods pending longer than spark.kubernetes.allocation.executor.timeout,
// pending pods beyond the number wanted) and which executors are lost. A pod
// that fails, is deleted or evicted is reported to the driver as an executor
// loss with the pod's reason (exit code, OOMKilled, Evicted, the API's
// message) and another pod replaces it; spark.executor.maxNumFailures
// failures (default max(3, 2 × executors)) fail the application. A pending
// pod the scheduler cannot place has its FailedScheduling reason (the
// PodScheduled condition's message) logged and printed by submit, and a
// round that cannot create pods says why, with the numbers wanted, pending
// and running. At the end the executor pods are deleted unless
// spark.kubernetes.executor.deleteOnTermination is false.
//
// When the application has a driver pod (cluster mode, or client mode with
// spark.kubernetes.driver.pod.name naming the pod the driver runs in), the
// executor pods are owned by it, and at start the allocator waits for its
// Ready condition before creating any, at most
// spark.kubernetes.allocation.driver.readinessTimeout; after that it logs a
// warning naming the key and creates them anyway, as Spark does.
//
// # Cluster mode
//
// Submit creates a driver pod (<prefix>-driver, label spark-role=driver)
// running the hidden command `sparkrpc driver --master ... --class ... --conf
// ...`, and a headless service <prefix>-driver-svc owned by it; the driver's
// executor pods carry a controller ownerReference to the driver pod, so
// deleting it removes them. Submit prints the driver pod's state changes
// (and its phase every spark.kubernetes.report.interval) and returns the
// application's result, unless spark.kubernetes.submission.waitAppCompletion
// is false. The submission's credentials
// (spark.kubernetes.authenticate.submission.*) are not passed to the driver
// pod; the driver uses its pod's service account: the in-cluster
// configuration, or, where the node cannot put the token at the in-cluster
// path (the local process node of package kubetest), the kubeconfig rules
// (KUBECONFIG) that node sets up; spark.kubernetes.authenticate.driver.*
// files override it. Kill and Status are submit --kill
// and --status NAMESPACE:DRIVER_POD (glob patterns allowed).
//
// # Checks at submit
//
// Before it creates anything, and unless
// spark.sparkrpc.kubernetes.submission.dryRun is false, submit creates the
// driver pod (cluster mode) and one executor pod (with a generated name and
// no owner) as a dry run (DryRun: All): admission runs (PodSecurity,
// LimitRange, ResourceQuota, the service account's existence, webhooks) and
// nothing is stored; a rejection is an error matching ErrPodRejected with
// the API server's message, except the executor pod's refusal by a
// ResourceQuota it fits but that is used up for now, which is noted and
// left to the allocator, whose executors wait for the quota. In cluster mode it first reviews, with a
// SubjectAccessReview per permission for the user
// system:serviceaccount:<namespace>:<spark.kubernetes.authenticate.driver.serviceAccountName,
// or default>, what the driver does with its account (pods: create, get,
// list, watch, delete, deletecollection; events: create, which only costs
// the Events when missing); a missing permission is an error matching
// ErrDriverAccessDenied that names it and the fix (deploy/kubernetes/rbac.yaml
// and the key). When the driver has a credential of its own
// (spark.kubernetes.authenticate.driver.{oauthToken,oauthTokenFile,clientCertFile})
// or the submitter may not create subjectaccessreviews, submit says the
// review was skipped.
//
// # Failures and Events
//
// A driver pod whose container cannot start (ErrImagePull,
// ImagePullBackOff, InvalidImageName, CreateContainerConfigError) is
// deleted by submit, whose error (ErrDriverFailed) names the reason and
// the image. The driver container's terminationMessagePolicy is FallbackToLogsOnError.
// When the driver pod fails, submit prints its termination message or,
// without one, the last 20 lines of its log, and its error ends with the
// last line. The driver posts core/v1 Events on its pod (source
// sparkrpc-driver; reasons SparkDriverStarted, SparkExecutorsRequested,
// SparkExecutorRegistered, SparkExecutorLost, SparkApplicationSucceeded,
// SparkApplicationFailed) with its own client, in order, from a goroutine
// of their own; a failure to post one is logged, never fatal.
//
// # The driver pod's address
//
// Executors reach a driver pod at the host it advertises:
// spark.driver.host when set; else, with
// spark.sparkrpc.kubernetes.driver.serviceHost=auto (the default), its
// headless service's DNS name <service>.<namespace>.svc when the pod's
// resolver (/etc/resolv.conf) searches a svc.* domain, as the kubelet
// writes for cluster DNS, and the name resolves (within 2 s) to the pod's
// IP; its pod IP otherwise (true: the name always; false: the IP). It binds
// the pod's IP either way. The local control plane of package kubetest has
// no cluster DNS: its drivers advertise their IP.
//
// # Credentials and errors
//
// The API client (package kubeclient) follows kubeconfig's rules
// (KUBECONFIG, ~/.kube/config, context spark.kubernetes.context), then
// Spark's keys
// spark.kubernetes.authenticate.submission.{oauthToken, oauthTokenFile,
// caCertFile, clientCertFile, clientKeyFile}; the master URL's server
// overrides the kubeconfig's. Every request is bounded by
// spark.kubernetes.submission.requestTimeout and connecting by
// spark.kubernetes.submission.connectionTimeout (driver pod:
// spark.kubernetes.driver.requestTimeout / connectionTimeout). API failures
// are *kubeclient.APIError values matching kubeclient.ErrUnreachable,
// ErrUnauthorized (with the credential used), ErrForbidden (verb, resource,
// namespace) or ErrNamespaceNotFound. Configuration errors match
// kubeconf.ErrInvalidConfig.
//
// Requests go through typed clients of the core/v1 resources the package
// uses (pods, secrets, services, events, namespaces) and of the
// authorization/v1 SubjectAccessReviews: client-go's generic typed client
// over a scheme of the one API group, and the executor pods are watched
// with tools/cache on it. The package links neither client-go's generated
// clients (even the core/v1 one brings the scheme of every API group) nor
// its informer factories.
//
// # Configuration keys
//
// Package kubeconf names them (kubeconf.KeyNamespace, ...):
//
//	spark.kubernetes.namespace                               default
//	spark.kubernetes.context                                 (current context)
//	spark.kubernetes.container.image                         (required)
//	spark.kubernetes.executor.container.image                (container.image)
//	spark.kubernetes.driver.container.image                  (container.image)
//	spark.kubernetes.container.image.pullPolicy              IfNotPresent
//	spark.kubernetes.executor.podNamePrefix                  <app name>-<unique id>
//	spark.kubernetes.driver.pod.name                         <prefix>-driver
//	spark.kubernetes.authenticate.driver.serviceAccountName  (none)
//	spark.kubernetes.authenticate.executor.serviceAccountName (driver's, without its token)
//	spark.kubernetes.executor.label.* / annotation.*         (none)
//	spark.kubernetes.driver.label.* / annotation.*           (none)
//	spark.kubernetes.node.selector.*                         (none)
//	spark.kubernetes.{driver,executor}.node.selector.*       (none; over node.selector.*)
//	spark.kubernetes.{driver,executor}.podTemplateFile       (none)
//	spark.kubernetes.{driver,executor}.podTemplateContainerName (the template's first)
//	spark.kubernetes.{driver,executor}.volumes.TYPE.NAME.{mount.*,options.*} (none)
//	spark.kubernetes.{driver,executor}.secrets.NAME          (none; a mount path)
//	spark.kubernetes.{driver,executor}.secretKeyRef.ENV      (none; SECRET:KEY)
//	spark.kubernetes.driverEnv.*, spark.executorEnv.*        (none)
//	spark.kubernetes.container.image.pullSecrets             (none; comma-separated)
//	spark.kubernetes.scheduler.name                          (the cluster's default)
//	spark.kubernetes.{driver,executor}.scheduler.name        (scheduler.name)
//	spark.kubernetes.memoryOverheadFactor                    0.1
//	spark.executor.memoryOverhead, spark.driver.memoryOverhead (from the factor, ≥ 384m)
//	spark.kubernetes.executor.request.cores / limit.cores    spark.executor.cores / none
//	spark.kubernetes.driver.request.cores / limit.cores      spark.driver.cores / none
//	spark.kubernetes.allocation.batch.size                   10
//	spark.kubernetes.allocation.batch.delay                  1s
//	spark.kubernetes.allocation.executor.timeout             600s
//	spark.kubernetes.allocation.maxPendingPods               unbounded
//	spark.kubernetes.allocation.driver.readinessTimeout      1s
//	spark.kubernetes.executor.deleteOnTermination            true
//	spark.kubernetes.submission.requestTimeout               10000 (ms)
//	spark.kubernetes.submission.connectionTimeout            10000 (ms)
//	spark.kubernetes.driver.requestTimeout                   10000 (ms)
//	spark.kubernetes.driver.connectionTimeout                10000 (ms)
//	spark.kubernetes.submission.waitAppCompletion            true
//	spark.kubernetes.report.interval                         1s
//	spark.kubernetes.appKillPodDeletionGracePeriod           (the pod's)
//	spark.kubernetes.authenticate.submission.{oauthToken,oauthTokenFile,caCertFile,clientCertFile,clientKeyFile}
//	spark.kubernetes.authenticate.driver.{oauthToken,oauthTokenFile,caCertFile,clientCertFile,clientKeyFile}
//	spark.sparkrpc.kubernetes.executable                     sparkrpc (the command the pods run)
//	spark.authenticate, spark.authenticate.secret(.file)     false (see Authentication)
//	spark.redaction.regex                                    (?i)secret|password|token|access[.]?key
//	spark.sparkrpc.kubernetes.authenticate.secretName        (set by submit for a driver pod)
//	spark.sparkrpc.kubernetes.submission.dryRun              true (see Checks at submit)
//	spark.sparkrpc.kubernetes.driver.serviceHost             auto (see The driver pod's address)
//
// # Files
//
// Each file holds one concept:
//
//   - submit.go: Submit and RunDriverPod, the driver here and its executors
//     in pods; driverpod.go: cluster mode (the driver pod, its service);
//     followdriver.go: following the driver pod until it ends; ops.go:
//     submit --kill and --status;
//   - authsecret.go: the application's secret as a Kubernetes Secret;
//     redaction.go: which keys are sensitive;
//   - dryrun.go: the dry run of the pods at submit; access.go: the review
//     of the driver's service account; failure.go: why a driver pod
//     failed; events.go: the Events on the driver pod; driverhost.go: the
//     driver pod's address; executorlogs.go: the executor pods' logs for
//     the driver's UI.
//
// # Packages
//
// Four packages below this one hold the rest, each importing only those
// before it:
//
//   - kubeconf: the configuration keys and their parsed values (Config),
//     the pods' labels and names;
//   - kubeclient: the API client (kubeconfig, credentials, timeouts), the
//     typed errors of its requests, the typed core/v1 clients and the pod
//     list-watches;
//   - podspec: the steps that build both roles' pods (template, volumes,
//     secrets, environment, scheduling, least privilege);
//   - executorpods: the allocator of the executor pods (its informer and
//     rounds, its decisions free of I/O, its wait for the driver pod) and
//     the executor pods' spec.
package kubernetes
