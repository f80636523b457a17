package main

// imagepull.go simulates an image that cannot be pulled, as a kubelet
// reports it: a pod whose first container's image starts with
// unpullablePrefix is never started; its container waits with reason
// ErrImagePull, then ImagePullBackOff, until the pod is deleted.

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// unpullablePrefix marks the images this node cannot pull.
const unpullablePrefix = "unpullable/"

// pullBackOffAfter is how long a pod's container reports ErrImagePull
// before ImagePullBackOff.
const pullBackOffAfter = time.Second

// unpullable reports whether image stands for an image that cannot be pulled.
func unpullable(image string) bool { return strings.HasPrefix(image, unpullablePrefix) }

// pullMessage is the message of a failed pull of image.
func pullMessage(image string) string {
	return "failed to pull and unpack image \"" + image + "\": pull access denied, repository does not exist or may require authorization"
}

// failPullLocked reports pp's first container waiting with ErrImagePull,
// then ImagePullBackOff; the caller holds p.mu.
func (p *provider) failPullLocked(pp *podProc) {
	image := pp.pod.Spec.Containers[0].Image
	pp.unpulled = true
	p.setContainerState(pp.pod, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: pullMessage(image)}}, false, "")
	p.notifyLocked(pp)
	p.cfg.logger.Warn("pod image cannot be pulled", "pod", podKey(pp.pod.Namespace, pp.pod.Name), "image", image)
	pp.killer = time.AfterFunc(pullBackOffAfter, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if pp.deleting || p.closed {
			return
		}
		p.setContainerState(pp.pod, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: "Back-off pulling image \"" + image + "\": ErrImagePull: " + pullMessage(image)}}, false, "")
		p.notifyLocked(pp)
	})
}

// deleteUnpulled ends the deletion of a pod whose image could not be
// pulled: nothing runs, so it is forgotten at once and its final pod is
// returned for finishDeletion; nil when key is no such pod.
func (p *provider) deleteUnpulled(key string, pod *corev1.Pod) *corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	pp, ok := p.pods[key]
	if !ok || pp.pod.UID != pod.UID || !pp.unpulled || pp.deleting {
		return nil
	}
	pp.deleting = true
	pp.killer.Stop()
	close(pp.exited)
	p.forgetLocked(key, pp)
	if p.closed {
		return nil
	}
	return pp.pod.DeepCopy()
}
