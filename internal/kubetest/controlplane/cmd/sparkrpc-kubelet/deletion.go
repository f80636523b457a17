package main

// deletion.go ends a deleted pod as the kubelet's status manager does: once
// the process of a pod that is being deleted has ended, its final status is
// written and the pod is removed from the API at once (grace period 0, on
// the condition of its UID), instead of lingering until the deletion's grace
// period has passed. Owners' garbage collection and everyone watching the
// pod then see it gone as soon as it is.

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// finishDeletion writes pod's final status and deletes it with no grace
// period; errors are logged (virtual-kubelet deletes it after the grace
// period anyway).
func (p *provider) finishDeletion(pod *corev1.Pod) {
	if p.cfg.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	pods := p.cfg.client.CoreV1().Pods(pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		cur.Status = pod.Status
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err == nil {
		zero := int64(0)
		err = pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		p.cfg.logger.Warn("removing a deleted pod", "pod", podKey(pod.Namespace, pod.Name), "err", fmt.Sprint(err))
	}
}
