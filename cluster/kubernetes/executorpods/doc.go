// Package executorpods keeps a sparkrpc application's executors running in
// Kubernetes pods, as Spark's ExecutorPodsAllocator,
// ExecutorPodsLifecycleManager and ExecutorPodsWatchSnapshotSource do. The
// Allocator is the driver's endpoints.ClusterManager.
//
// An informer (client-go's tools/cache, on a list and watch of the pods
// client) keeps a snapshot of the application's executor pods (Selector:
// spark-app-selector=<app id>,spark-role=executor; an expired watch is
// relisted by the informer) and every event, or every
// spark.kubernetes.allocation.batch.delay, triggers a round: decide
// (plan.go, free of I/O) says which pods to create (at most
// spark.kubernetes.allocation.batch.size a round, at most
// spark.kubernetes.allocation.maxPendingPods pending), which to delete
// (ended pods, pods pending longer than
// spark.kubernetes.allocation.executor.timeout, pending pods beyond the
// number wanted) and which executors are lost; the Allocator does it
// through the API. A pod that fails, is deleted or evicted is reported to
// the driver (Options.OnLost) as an executor loss with the pod's reason,
// and another pod replaces it; spark.executor.maxNumFailures failures end
// the application with ErrTooManyFailures (Allocator.Failed). A container
// that cannot start (ErrImagePull, ImagePullBackOff, InvalidImageName,
// CreateContainerConfigError) is such a failure at once, its reason and
// image reported once. A pod being deleted whose container still runs is
// decommissioning (Options.OnDecommission), not lost: its executor
// finishes its tasks, and is lost when the pod is gone or its grace period
// (the deletion timestamp) has passed; a replacement is created at once.
//
// Failed requests are handled by cause (kubeclient's classification): a
// quota or admission refusal is back-pressure, retried with exponential
// backoff and jitter and logged with the quota's name or the admission
// message, while the application goes on with the executors it has; it
// fails with ErrExecutorsRefused only when none runs and every pod was
// refused for longer than spark.kubernetes.allocation.executor.timeout. An
// RBAC denial, 401, a missing namespace or an invalid pod fails it at once;
// transient errors are retried with backoff. The pods of a batch that were
// not created are not counted as created; a failed deletion is retried.
//
// With an owner (Options.Owner: the driver pod), the executor pods are
// owned by it, and at start the Allocator waits for its Ready condition
// before creating any, at most
// spark.kubernetes.allocation.driver.readinessTimeout; after that it logs a
// warning naming the key and creates them anyway, as Spark does. Stop
// deletes the executor pods unless
// spark.kubernetes.executor.deleteOnTermination is false.
//
// # Files
//
//   - allocator.go: the Allocator's pod informer and allocation rounds;
//   - podcalls.go: its calls on the API server for pods (create, delete,
//     delete all at the end);
//   - allocatorcm.go: its endpoints.ClusterManager methods;
//   - plan.go: its decisions, free of I/O;
//   - refusals.go: its handling of failed creations and deletions;
//   - backoff.go: its retry delays;
//   - readiness.go: its wait for the driver pod;
//   - pods.go: the executor pods' spec (Pod: sparkrpc's pod shaped by
//     package podspec's steps), names and selector.
package executorpods
