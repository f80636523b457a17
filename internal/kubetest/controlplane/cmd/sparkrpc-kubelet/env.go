package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// containerEnv is the environment of container c of pod, in "K=V" form: a small base (PATH with
// --path-prefix in front, HOME, TMPDIR, HOSTNAME, KUBERNETES_SERVICE_HOST/PORT naming the API
// server), then envFrom, then env with $(VAR) expansion and valueFrom sources, as the kubelet
// resolves them. Service links are not added.
func (p *provider) containerEnv(pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	env := &orderedEnv{vals: map[string]string{}}
	p.baseEnv(env, pod)
	for _, from := range c.EnvFrom {
		data, err := p.envFromSource(pod, from)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			env.set(from.Prefix+k, v)
		}
	}

	// Expansion sees the variables defined so far, as the kubelet's does.
	mapping := expansion.MappingFuncFor(env.vals)
	for i := range c.Env {
		e := &c.Env[i]
		if e.ValueFrom == nil {
			env.set(e.Name, expansion.Expand(e.Value, mapping))
			continue
		}
		v, ok, err := p.valueFrom(pod, c, e)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			env.set(e.Name, v)
		}
	}

	if p.cfg.pathPrefix != "" {
		env.vals["PATH"] = p.cfg.pathPrefix + string(filepath.ListSeparator) + env.vals["PATH"]
	}
	out := make([]string, 0, len(env.order))
	for _, k := range env.order {
		out = append(out, k+"="+env.vals[k])
	}
	return out, nil
}

// orderedEnv is an environment that keeps its variables in the order they were first set.
type orderedEnv struct {
	order []string
	vals  map[string]string
}

func (e *orderedEnv) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.order = append(e.order, k)
	}
	e.vals[k] = v
}

// baseEnv sets what every container gets: this process's PATH, HOME, TMPDIR, LANG and TZ, the
// pod's name as HOSTNAME, and the API server as KUBERNETES_SERVICE_HOST/PORT.
func (p *provider) baseEnv(env *orderedEnv, pod *corev1.Pod) {
	env.set("PATH", os.Getenv("PATH"))
	for _, k := range []string{"HOME", "TMPDIR", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env.set(k, v)
		}
	}
	env.set("HOSTNAME", pod.Name)
	if u, err := url.Parse(p.cfg.apiServer); err == nil && u.Host != "" {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			host, port = u.Host, "443"
		}
		env.set("KUBERNETES_SERVICE_HOST", host)
		env.set("KUBERNETES_SERVICE_PORT", port)
		env.set("KUBERNETES_SERVICE_PORT_HTTPS", port)
	}
}

// envFromSource returns the variables of one envFrom source (a config map or a secret of the
// pod's namespace); none, without an error, for an optional source that is missing.
func (p *provider) envFromSource(pod *corev1.Pod, from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := p.listers.ConfigMaps.ConfigMaps(pod.Namespace).Get(from.ConfigMapRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom configMap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := p.listers.Secrets.Secrets(pod.Namespace).Get(from.SecretRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && from.SecretRef.Optional != nil && *from.SecretRef.Optional {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
		}
		data := map[string]string{}
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// valueFrom resolves an env var's valueFrom; ok is false for an optional source that is missing.
func (p *provider) valueFrom(pod *corev1.Pod, c *corev1.Container, e *corev1.EnvVar) (string, bool, error) {
	src := e.ValueFrom
	switch {
	case src.FieldRef != nil:
		v, err := p.fieldRef(pod, src.FieldRef.FieldPath)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		var alloc corev1.ResourceList
		if p.listers.Node != nil {
			alloc = p.listers.Node.Status.Allocatable
		}
		name := src.ResourceFieldRef.ContainerName
		if name == "" {
			name = c.Name
		}
		v, err := resource.ExtractResourceValueByContainerNameAndNodeAllocatable(src.ResourceFieldRef, pod, name, alloc)
		return v, err == nil, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		optional := ref.Optional != nil && *ref.Optional
		cm, err := p.listers.ConfigMaps.ConfigMaps(pod.Namespace).Get(ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configMap %s: %w", ref.Name, err)
		}
		v, ok := cm.Data[ref.Key]
		if !ok && !optional {
			return "", false, fmt.Errorf("configMap %s has no key %s", ref.Name, ref.Key)
		}
		return v, ok, nil
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		optional := ref.Optional != nil && *ref.Optional
		s, err := p.listers.Secrets.Secrets(pod.Namespace).Get(ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %s: %w", ref.Name, err)
		}
		v, ok := s.Data[ref.Key]
		if !ok && !optional {
			return "", false, fmt.Errorf("secret %s has no key %s", ref.Name, ref.Key)
		}
		return string(v), ok, nil
	}
	return "", false, fmt.Errorf("unsupported valueFrom source")
}

// fieldRef is the Downward API value of a pod field.
func (p *provider) fieldRef(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "spec.nodeName":
		if pod.Spec.NodeName != "" {
			return pod.Spec.NodeName, nil
		}
		return p.cfg.nodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.hostIP":
		return p.cfg.nodeIP, nil
	case "status.podIPs", "status.hostIPs":
		return p.cfg.nodeIP, nil
	}
	if strings.HasPrefix(path, "metadata.") {
		return fieldpath.ExtractFieldPathAsString(pod, path)
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}
