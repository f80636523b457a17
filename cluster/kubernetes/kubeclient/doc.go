// Package kubeclient connects sparkrpc to a Kubernetes API server, as
// Spark's SparkKubernetesClientFactory does: New makes a Client from
// kubeconfig's rules (KUBECONFIG, ~/.kube/config, context
// spark.kubernetes.context), Spark's credential keys
// (spark.kubernetes.authenticate.submission.*, or .driver.* in a driver
// pod) and, in a driver pod, the in-cluster configuration. Every request
// is bounded by the request timeout (spark.kubernetes.submission.requestTimeout
// or spark.kubernetes.driver.requestTimeout) and connecting by the
// connection timeout.
//
// A failed request becomes an *APIError (Client.APIError) saying what was
// asked, where and with which credential, and matching one of the
// sentinel errors: ErrUnreachable, ErrUnauthorized, ErrForbidden (RBAC),
// ErrQuotaExceeded, ErrAdmissionDenied (PodSecurity, LimitRange,
// webhooks), ErrTransient (5xx, 429, conflicts), ErrNamespaceNotFound or
// ErrNotFound; ErrCredentials is a credential that cannot be read. A 403 is
// classified by its message: quota and admission refusals are the
// cluster's policy saying "not now" (BackPressure), RBAC denials are not;
// Retryable says which failures to retry as they are.
//
// Requests go through typed clients of the core/v1 resources sparkrpc uses
// (Client.CoreV1: pods, secrets, services, events, namespaces) and of the
// authorization/v1 SubjectAccessReviews (Client.AuthorizationV1): client-go's
// generic typed client over a scheme of the one API group, and PodListWatch and
// NamedPodListWatch list and watch pods for tools/cache. The package links
// neither client-go's generated clients (even the core/v1 one brings the
// scheme of every API group) nor its informer factories.
//
// # Files
//
//   - apiclient.go: Client and New (kubeconfig, credentials, timeouts) and
//     CheckAccess;
//   - apierror.go: the typed errors of its requests;
//   - corev1.go: the typed clients of the core/v1 resources and the pod
//     list-watches;
//   - authorizationv1.go: the typed client of the SubjectAccessReviews.
package kubeclient
