package kubeclient

// apierror.go turns the API server's answers into typed errors: sentinel
// errors to match with errors.Is, and *APIError with what was asked, where
// and with which credential.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// Error says what was asked, where, and why it failed.
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

// APIError classifies err, the failure of verb on resource in namespace,
// as an *APIError matching one of the sentinel errors (or wraps it when it
// is none of theirs); nil stays nil, and an *APIError is returned as it is.
func (c *Client) APIError(err error, verb, resource, namespace string) error {
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
		e.Kind, e.hint = ErrNamespaceNotFound, fmt.Sprintf("create it, or give another with %s", kubeconf.KeyNamespace)
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
