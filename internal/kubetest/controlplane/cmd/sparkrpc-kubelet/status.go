// Pod status as the node reports it: phase, conditions and container state.

package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// baseStatus is the status of a pod just accepted by the node.
func (p *provider) baseStatus(pod *corev1.Pod, now metav1.Time) corev1.PodStatus {
	return corev1.PodStatus{
		HostIP:    p.cfg.nodeIP,
		HostIPs:   []corev1.HostIP{{IP: p.cfg.nodeIP}},
		PodIP:     p.cfg.nodeIP,
		PodIPs:    []corev1.PodIP{{IP: p.cfg.nodeIP}},
		StartTime: &now,
		QOSClass:  pod.Status.QOSClass,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: now, Reason: "ContainersNotReady"},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now, Reason: "ContainersNotReady"},
		},
	}
}

// setConditions sets the ContainersReady and Ready conditions.
func (p *provider) setConditions(pod *corev1.Pod, ready bool, reason string) {
	now := metav1.Now()
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != corev1.ContainersReady && c.Type != corev1.PodReady {
			continue
		}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		if c.Status != st {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason = st, reason
	}
}

// setContainerState sets the first container's state; the others are reported waiting, as they
// are never run.
func (p *provider) setContainerState(pod *corev1.Pod, state corev1.ContainerState, ready bool, id string) {
	var out []corev1.ContainerStatus
	for i, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image}
		if i == 0 {
			cs.State, cs.Ready = state, ready
			started := state.Running != nil
			cs.Started = &started
			cs.ContainerID = id
		} else {
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "NotSupported", Message: "sparkrpc-kubelet runs only a pod's first container",
			}}
		}
		out = append(out, cs)
	}
	pod.Status.ContainerStatuses = out
}

// containerID names a container by the pid of its process.
func containerID(pid int) string { return fmt.Sprintf("process://%d", pid) }
