package kubernetes

// access.go reviews, before submit creates a driver pod, whether the pod's
// service account may do what the driver does in its namespace: one
// SubjectAccessReview per verb and resource, for the user
// system:serviceaccount:NAMESPACE:NAME.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrDriverAccessDenied is matched by submit's error when the driver pod's
// service account may not do what the driver must; the error names each
// missing permission and the fix.
var ErrDriverAccessDenied = errors.New("kubernetes: the driver's service account lacks permissions")

// permission is a verb on a resource of an API group ("" is core) in the
// application's namespace.
type permission struct {
	group, resource, verb string
	// why says what the driver does with it.
	why string
	// optional permissions, when missing, cost a feature, not the
	// application.
	optional bool
}

func (p permission) String() string {
	r := p.resource
	if p.group != "" {
		r += "." + p.group
	}
	return p.verb + " " + r
}

// driverPermissions is what a driver pod does with its service account
// (see submit.go, authsecret.go and package executorpods): it reads its
// namespace (optional: CheckAccess falls back to listing pods), its own pod
// (the executors' owner, and its readiness), and creates, lists, watches
// and deletes its executor pods; it posts Events on its pod (events.go).
// In cluster mode the application's Secret is created by submit, not the
// driver.
var driverPermissions = []permission{
	{resource: "pods", verb: "create", why: "create the executor pods"},
	{resource: "pods", verb: "get", why: "read its own pod, the executors' owner"},
	{resource: "pods", verb: "list", why: "list the executor pods"},
	{resource: "pods", verb: "watch", why: "watch the executor pods and its own pod"},
	{resource: "pods", verb: "delete", why: "delete executor pods"},
	{resource: "pods", verb: "deletecollection", why: "delete the executor pods at the end"},
	{resource: "events", verb: "create", why: "post Events on its pod", optional: true},
}

// driverCredentialKeys are the keys that give a driver pod a credential of
// its own, instead of its service account's.
var driverCredentialKeys = []string{kubeconf.AuthOAuthToken, kubeconf.AuthOAuthTokenFile, kubeconf.AuthClientCertFile}

// reviewDriverAccess asks the API server whether the service account
// of the driver pod (c.ServiceAccount, or the namespace's "default") has
// driverPermissions, and returns an error matching ErrDriverAccessDenied,
// naming the missing ones and the fix, when a required one is missing. It
// writes to out what it could not check: nothing when the driver has a
// credential of its own (spark.kubernetes.authenticate.driver.*), the
// review when the submitter may not create SubjectAccessReviews.
func reviewDriverAccess(ctx context.Context, client *kubeclient.Client, conf *actor.Conf, c *kubeconf.Config, out io.Writer) error {
	for _, k := range driverCredentialKeys {
		if _, ok := conf.Lookup(kubeconf.KeyAuthDriverPrefix + k); ok {
			fmt.Fprintf(out, "Access review skipped: the driver authenticates with %s%s, not its service account\n", kubeconf.KeyAuthDriverPrefix, k)
			return nil
		}
	}
	sa := c.ServiceAccount
	if sa == "" {
		sa = "default"
	}
	user := "system:serviceaccount:" + c.Namespace + ":" + sa
	var missing, missingOptional []string
	for _, p := range driverPermissions {
		allowed, err := mayDo(ctx, client, c.Namespace, user, p)
		if err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
				fmt.Fprintf(out, "Access review of service account %s skipped: %s may not create subjectaccessreviews (authorization.k8s.io)\n",
					user, client.Credential)
				return nil
			}
			return client.APIError(err, "create", "subjectaccessreviews.authorization.k8s.io", "")
		}
		switch {
		case allowed:
		case p.optional:
			missingOptional = append(missingOptional, p.String()+" (to "+p.why+")")
		default:
			missing = append(missing, p.String()+" (to "+p.why+")")
		}
	}
	if len(missingOptional) > 0 {
		fmt.Fprintf(out, "Service account %s may not %s in namespace %s: the driver goes without\n", user, strings.Join(missingOptional, ", "), c.Namespace)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s may not, in namespace %s: %s. Fix: bind it a role that allows them, as deploy/kubernetes/rbac.yaml does "+
		"(kubectl apply -n %s -f deploy/kubernetes/rbac.yaml), and name the account with %s=sparkrpc-driver",
		ErrDriverAccessDenied, user, c.Namespace, strings.Join(missing, ", "), c.Namespace, kubeconf.KeyServiceAccountName)
}

// mayDo asks whether user, a service account of namespace ns (with the
// groups the API server gives service accounts), may do p in ns.
func mayDo(ctx context.Context, client *kubeclient.Client, ns, user string, p permission) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: p.verb, Group: p.group, Resource: p.resource,
		},
	}}
	cctx, cancel := context.WithTimeout(ctx, client.Timeout)
	defer cancel()
	res, err := client.AuthorizationV1().SubjectAccessReviews().Create(cctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}
