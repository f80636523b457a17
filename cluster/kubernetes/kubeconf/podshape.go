package kubeconf

// podshape.go holds PodShape, what the configuration says of one role's
// pods beyond their basics: a template, volumes, secrets, environment,
// image pull secrets, node selector and scheduler.

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// PodShape is the shape the configuration gives one role's pods.
type PodShape struct {
	// Template, when not nil, is the pod template (the base of the pods),
	// and TemplateContainer the name of Spark's container in it ("" for
	// its first container).
	Template          *corev1.Pod
	TemplateContainer string
	// Volumes are the volumes the keys mount (Spark's
	// MountVolumesFeatureStep), sorted by name.
	Volumes []Volume
	// Secrets are the Secrets the keys mount, sorted by name.
	Secrets []SecretMount
	// SecretEnv are the variables from Secrets' keys, sorted by name.
	SecretEnv []corev1.EnvVar
	// Env are the variables the keys set, sorted by name.
	Env []corev1.EnvVar
	// PullSecrets are the image pull secrets.
	PullSecrets []string
	// NodeSelector is the node selector of all pods with the role's on top.
	NodeSelector map[string]string
	// SchedulerName is the pods' scheduler ("" for the cluster's default).
	SchedulerName string
}

// SecretMount is a Secret mounted at a path.
type SecretMount struct{ Name, Path string }

// ParseShape reads the shape of the pods of the role whose keys are k. It
// reads the role's template file when one is given.
func ParseShape(conf *actor.Conf, k RoleKeys) (PodShape, error) {
	var s PodShape
	var err error
	if file := conf.Get(k.TemplateFile, ""); file != "" {
		s.TemplateContainer = conf.Get(k.TemplateContainerName, "")
		if s.Template, err = ReadPodTemplate(file, s.TemplateContainer); err != nil {
			return s, Invalid(k.TemplateFile, file, err.Error())
		}
	}
	if s.Volumes, err = parseVolumes(conf, k.VolumesPrefix); err != nil {
		return s, err
	}
	if s.Secrets, err = parseSecrets(conf, k.SecretsPrefix); err != nil {
		return s, err
	}
	if s.SecretEnv, err = parseSecretEnv(conf, k.SecretKeyRefPrefix); err != nil {
		return s, err
	}
	if s.Env, err = parseEnv(conf, k.EnvPrefix); err != nil {
		return s, err
	}
	if s.PullSecrets, err = parsePullSecrets(conf); err != nil {
		return s, err
	}
	if s.NodeSelector, err = Labels(conf, KeyNodeSelectorPrefix); err != nil {
		return s, err
	}
	role, err := Labels(conf, k.NodeSelectorPrefix)
	if err != nil {
		return s, err
	}
	maps.Copy(s.NodeSelector, role)
	s.SchedulerName = conf.Get(k.SchedulerName, conf.Get(KeySchedulerName, ""))
	if s.SchedulerName != "" && !IsDNSSubdomain(s.SchedulerName) {
		key := k.SchedulerName
		if _, ok := conf.Lookup(key); !ok {
			key = KeySchedulerName
		}
		return s, Invalid(key, s.SchedulerName, "not a valid scheduler name (a DNS subdomain)")
	}
	return s, nil
}

// ReadPodTemplate reads a pod template, a Pod in YAML or JSON; container,
// when not empty, must name one of its containers.
func ReadPodTemplate(file, container string) (*corev1.Pod, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		return nil, fmt.Errorf("not a Pod: %w", err)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return nil, fmt.Errorf("a %s, not a Pod", pod.Kind)
	}
	if container != "" && !slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == container }) {
		return nil, fmt.Errorf("no container named %q", container)
	}
	return &pod, nil
}

// parseSecrets reads prefix + NAME=PATH: Secret NAME mounted at PATH.
func parseSecrets(conf *actor.Conf, prefix string) ([]SecretMount, error) {
	var out []SecretMount
	for k, v := range conf.All() {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if !IsDNSSubdomain(name) {
			return nil, Invalid(k, v, "the part after "+prefix+" must be a Secret's name")
		}
		if !strings.HasPrefix(v, "/") {
			return nil, Invalid(k, v, "must be an absolute mount path")
		}
		out = append(out, SecretMount{Name: name, Path: v})
	}
	slices.SortFunc(out, func(a, b SecretMount) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseSecretEnv reads prefix + ENV=NAME:KEY: variable ENV from key KEY of
// Secret NAME.
func parseSecretEnv(conf *actor.Conf, prefix string) ([]corev1.EnvVar, error) {
	var out []corev1.EnvVar
	for k, v := range conf.All() {
		env, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		name, key, ok := strings.Cut(v, ":")
		if !validEnvName(env) || !ok || !IsDNSSubdomain(name) || key == "" {
			return nil, Invalid(k, v, "must be "+prefix+"ENV=SECRET:KEY")
		}
		out = append(out, corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}})
	}
	slices.SortFunc(out, func(a, b corev1.EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseEnv reads prefix + NAME=VALUE.
func parseEnv(conf *actor.Conf, prefix string) ([]corev1.EnvVar, error) {
	var out []corev1.EnvVar
	for k, v := range conf.All() {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if !validEnvName(name) {
			return nil, Invalid(k, v, "the part after "+prefix+" must be a variable's name")
		}
		out = append(out, corev1.EnvVar{Name: name, Value: v})
	}
	slices.SortFunc(out, func(a, b corev1.EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parsePullSecrets reads KeyImagePullSecrets.
func parsePullSecrets(conf *actor.Conf) ([]string, error) {
	var out []string
	v := conf.Get(KeyImagePullSecrets, "")
	for s := range strings.SplitSeq(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !IsDNSSubdomain(s) {
			return nil, Invalid(KeyImagePullSecrets, v, fmt.Sprintf("%q is not a Secret's name", s))
		}
		out = append(out, s)
	}
	return out, nil
}

// validEnvName is Kubernetes' rule for a variable's name: printable
// characters but '=', not empty.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '!' || r > '~' || r == '=' {
			return false
		}
	}
	return true
}

// IsDNSSubdomain reports whether s is a DNS subdomain (RFC 1123) of at
// most 253 characters, as most Kubernetes object names are.
func IsDNSSubdomain(s string) bool { return len(s) <= 253 && dnsSubdomain.MatchString(s) }
