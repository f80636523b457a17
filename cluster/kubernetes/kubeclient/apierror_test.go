package kubeclient

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestAPIErrorClassification: a refusal is classified by its cause, as the
// API server words it, not by its HTTP status alone.
func TestAPIErrorClassification(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	forbidden := func(msg string) error { return apierrors.NewForbidden(pods, "app-exec-3", errors.New(msg)) }
	webhook := apierrors.NewBadRequest(`admission webhook "policy.example.com" denied the request: images must come from registry.example.com`)
	cases := []struct {
		name         string
		err          error
		kind         error
		quota        string
		want         []string
		retry, press bool
	}{
		{name: "quota", err: forbidden("exceeded quota: compute-quota, requested: pods=1, used: pods=2, limited: pods=2"),
			kind: ErrQuotaExceeded, quota: "compute-quota", want: []string{"compute-quota", "limited: pods=2"}, press: true},
		{name: "quota not counted yet", err: forbidden("status unknown for quota: q2, resources: pods"),
			kind: ErrQuotaExceeded, quota: "q2", want: []string{"q2"}, press: true},
		{name: "pod security", err: forbidden(`violates PodSecurity "restricted:latest": runAsNonRoot != true`),
			kind: ErrAdmissionDenied, want: []string{"PodSecurity", "runAsNonRoot"}, press: true},
		{name: "limit range", err: forbidden("maximum cpu usage per Container is 1, but limit is 2"),
			kind: ErrAdmissionDenied, want: []string{"LimitRange", "per Container"}, press: true},
		{name: "webhook", err: webhook, kind: ErrAdmissionDenied, want: []string{"policy.example.com", "webhook"}, press: true},
		{name: "rbac", err: forbidden(`User "system:serviceaccount:default:spark" cannot create resource "pods" in API group "" in the namespace "default"`),
			kind: ErrForbidden, want: []string{"RBAC", "create", "pods", `"default"`}},
		{name: "internal error", err: apierrors.NewInternalError(errors.New("etcd leader changed")), kind: ErrTransient, retry: true},
		{name: "unavailable", err: apierrors.NewServiceUnavailable("shutting down"), kind: ErrTransient, retry: true},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1), kind: ErrTransient, retry: true},
		{name: "conflict", err: apierrors.NewConflict(pods, "app-exec-3", errors.New("the object has been modified")), kind: ErrTransient, retry: true},
		{name: "server timeout", err: apierrors.NewTimeoutError("took too long", 1), kind: ErrUnreachable, retry: true},
		{name: "bad gateway", err: apierrors.NewGenericServerResponse(http.StatusBadGateway, "POST", pods, "", "", 0, false), kind: ErrTransient, retry: true},
	}
	c := &Client{Server: "https://api", Credential: "token t"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.APIError(tc.err, "create", "pods", "default")
			var ae *APIError
			if !errors.Is(err, tc.kind) || !errors.As(err, &ae) || ae.Quota != tc.quota {
				t.Fatalf("APIError = %v (%#v); want kind %v, quota %q", err, ae, tc.kind, tc.quota)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if Retryable(err) != tc.retry || BackPressure(err) != tc.press {
				t.Errorf("Retryable %v BackPressure %v; want %v %v", Retryable(err), BackPressure(err), tc.retry, tc.press)
			}
			if tc.kind != ErrForbidden && errors.Is(err, ErrForbidden) {
				t.Errorf("%v also matches ErrForbidden", err)
			}
		})
	}
}
