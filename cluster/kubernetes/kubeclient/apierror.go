package kubeclient

// apierror.go turns the API server's answers into typed errors: sentinel
// errors to match with errors.Is, and *APIError with what was asked, where
// and with which credential. A refusal is classified by its cause, not only
// its HTTP status: a 403 may be RBAC (fatal), an exceeded ResourceQuota or
// an admission check (back-pressure a caller retries); 5xx, 429 and
// conflicts are transient.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

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
	// ErrForbidden: RBAC refused the request (HTTP 403 that is neither a
	// quota nor an admission refusal).
	ErrForbidden = errors.New("kubernetes: forbidden")
	// ErrQuotaExceeded: a ResourceQuota refused the object (HTTP 403
	// "exceeded quota"); APIError.Quota names it. It passes once the
	// namespace's usage drops.
	ErrQuotaExceeded = errors.New("kubernetes: quota exceeded")
	// ErrAdmissionDenied: an admission check refused the object: a
	// PodSecurity level, a LimitRange bound, a validating or mutating
	// webhook.
	ErrAdmissionDenied = errors.New("kubernetes: admission denied")
	// ErrTransient: the API server failed in a way worth retrying (HTTP
	// 5xx, 429 Too Many Requests, 409 Conflict).
	ErrTransient = errors.New("kubernetes: transient API error")
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
	// Quota is the ResourceQuota that refused the object (ErrQuotaExceeded).
	Quota string
	// Message is the API server's message for a quota or admission
	// refusal: what the cluster's policy says.
	Message string
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
	case classifyRefusal(e, err):
	case apierrors.IsForbidden(err):
		e.Kind, e.hint = ErrForbidden, fmt.Sprintf("HTTP 403: RBAC does not allow %s on %s in namespace %q for %s; see deploy/kubernetes/rbac.yaml",
			verb, resource, namespace, c.Credential)
	case apierrors.IsNotFound(err) && errors.As(err, &st) && st.Status().Details != nil && st.Status().Details.Kind == "namespaces":
		e.Kind, e.hint = ErrNamespaceNotFound, fmt.Sprintf("create it, or give another with %s", kubeconf.KeyNamespace)
	case apierrors.IsNotFound(err):
		e.Kind = ErrNotFound
	case isUnreachable(err):
		e.Kind, e.hint = ErrUnreachable, fmt.Sprintf("no answer within %s (%s)", c.Timeout, c.TimeoutKey)
	case isTransient(err):
		e.Kind, e.hint = ErrTransient, "retry later"
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

// Retryable reports whether err is worth retrying as it is: the API server
// did not answer or failed transiently (ErrUnreachable, ErrTransient).
func Retryable(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTransient)
}

// BackPressure reports whether err is the cluster's policy refusing more
// for now (ErrQuotaExceeded, ErrAdmissionDenied): the same request may
// pass later, once usage drops or the policy changes, so a caller that can
// wait retries with backoff instead of failing.
func BackPressure(err error) bool {
	return errors.Is(err, ErrQuotaExceeded) || errors.Is(err, ErrAdmissionDenied)
}

// quotaName finds the quota's name in the admission message "exceeded
// quota: NAME, requested: ..." (or "status unknown for quota: NAME, ...",
// before the quota controller has counted the namespace's usage).
var quotaName = regexp.MustCompile(`(?:exceeded quota|status unknown for quota): ([^,\s]+)`)

// limitRange matches the LimitRanger's refusals ("maximum cpu usage per
// Container is 1, but limit is 2", "memory max limit to request ratio per
// Pod is 2, ...").
var limitRange = regexp.MustCompile(`(?i)(maximum|minimum) \S+ usage per (container|pod)|limit to request ratio per (container|pod)`)

// classifyRefusal sets e's kind when err is a quota or admission refusal
// (by its message: the status code of these is 403, or a webhook's own)
// and reports whether it was.
func classifyRefusal(e *APIError, err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	msg := st.Status().Message
	switch {
	case apierrors.IsForbidden(err) && (strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "status unknown for quota")):
		e.Kind, e.Message = ErrQuotaExceeded, msg
		if m := quotaName.FindStringSubmatch(msg); m != nil {
			e.Quota = m[1]
		}
		e.hint = "HTTP 403: ResourceQuota " + e.Quota + " of the namespace is used up"
	case apierrors.IsForbidden(err) && strings.Contains(msg, "violates PodSecurity"):
		e.Kind, e.Message, e.hint = ErrAdmissionDenied, msg, "HTTP 403: the namespace's PodSecurity level refuses the pod"
	case apierrors.IsForbidden(err) && limitRange.MatchString(msg):
		e.Kind, e.Message, e.hint = ErrAdmissionDenied, msg, "HTTP 403: a LimitRange of the namespace refuses the pod's resources"
	case strings.Contains(msg, "admission webhook") && strings.Contains(msg, "denied the request"):
		e.Kind, e.Message, e.hint = ErrAdmissionDenied, msg, fmt.Sprintf("HTTP %d: an admission webhook refuses the object", st.Status().Code)
	default:
		return false
	}
	return true
}

// isTransient reports whether err is an answer worth retrying: a server
// error, throttling or a conflict.
func isTransient(err error) bool {
	var st apierrors.APIStatus
	return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsConflict(err) || apierrors.IsUnexpectedServerError(err) ||
		(errors.As(err, &st) && st.Status().Code >= 500)
}
