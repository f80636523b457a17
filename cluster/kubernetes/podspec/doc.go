// Package podspec builds the pods of a sparkrpc application on Kubernetes
// as Spark's deploy/k8s/features steps do: each concern is a Step, a small
// function that changes a pod, tested alone, and a pod is its base (the
// role's pod template, spark.kubernetes.{driver,executor}.podTemplateFile,
// or an empty pod) transformed by the steps in a fixed order (Pod):
//
//  1. Overlay: the pod sparkrpc builds (names, labels, Spark's container's
//     image, command, arguments, environment and resources, owner
//     references, restart policy Never) over the template, merged as Spark
//     merges: sparkrpc's fields win where Spark's do, and the template's
//     labels, annotations, tolerations, affinity, volumes, security
//     context, node selector entries and other containers (sidecars) are
//     kept. Spark's container is the template's container named by
//     spark.kubernetes.{driver,executor}.podTemplateContainerName (its
//     first by default), moved first in the pod;
//  2. LocalDir: an emptyDir at /var/data/spark-local-dir-1, the container's
//     working directory (its one writable place);
//  3. Volumes, Secrets, Env: the volumes, Secrets, variables from Secrets'
//     keys and variables of the role's keys;
//  4. PullSecrets, NodeSelector, SchedulerName;
//  5. the role's own steps (executors: NoTokenUnless, no service account
//     token without an account of their own);
//  6. Restricted: PodSecurity's "restricted" security context where the
//     template sets none.
//
// The steps do no I/O; the keys are read and checked by package kubeconf
// (PodShape).
//
// # Files
//
//   - build.go: Step and Build, the base pod of a template;
//   - overlay.go: Overlay, sparkrpc's pod over the template;
//   - mounts.go: Volumes, Secrets and LocalDir;
//   - env.go: Env;
//   - scheduling.go: NodeSelector, SchedulerName and PullSecrets;
//   - privilege.go: NoTokenUnless and Restricted;
//   - shape.go: Shape and Pod, the steps in their order.
package podspec
