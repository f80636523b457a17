package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLogTail(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.log")
	if err := os.WriteFile(f, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	for tail, want := range map[int]string{0: "a\nb\nc\nd\n", 1: "d\n", 2: "c\nd\n", 4: "a\nb\nc\nd\n", 9: "a\nb\nc\nd\n"} {
		r, err := openLog(context.Background(), f, done, api.ContainerLogOpts{Tail: tail, Follow: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != want {
			t.Errorf("tail %d: %q, %v; want %q", tail, b, err, want)
		}
	}
}

func TestContainerEnvAndLookPath(t *testing.T) {
	prefix := t.TempDir()
	tool := filepath.Join(prefix, "mytool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newProvider(providerConfig{nodeName: "n1", nodeIP: "127.0.0.1", pathPrefix: prefix, apiServer: "https://127.0.0.1:6443", logger: slog.Default()})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{
			{Name: "NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "APP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "MSG", Value: "$(NAME)@$(IP) $(UNDEFINED)"},
		}}}},
	}
	env, err := p.containerEnv(pod, &pod.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME=p", "APP=x", "IP=127.0.0.1", "MSG=p@127.0.0.1 $(UNDEFINED)", "HOSTNAME=p",
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=6443", "PATH=" + prefix + ":" + os.Getenv("PATH")} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %q: %q", want, env)
		}
	}
	if got, err := lookPath("mytool", prefix+":"+os.Getenv("PATH")); err != nil || got != tool {
		t.Errorf("lookPath(mytool) = %q, %v; want %q", got, err, tool)
	}
	if _, err := lookPath("no-such-tool-here", prefix); err == nil {
		t.Error("lookPath of a missing command succeeded")
	}
}

// A container's command is looked up in the folder of its image first.
func TestImageProgram(t *testing.T) {
	imageDir, pathDir := t.TempDir(), t.TempDir()
	for _, d := range []string{imageDir, pathDir} {
		if err := os.WriteFile(filepath.Join(d, "prog"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := newProvider(providerConfig{nodeName: "n1", images: map[string]string{"me/prog:1": imageDir}, logger: slog.Default()})
	for image, want := range map[string]string{"me/prog:1": imageDir, "me/prog:2": pathDir, "": pathDir} {
		if got, err := p.commandPath(image, "prog", pathDir); err != nil || got != filepath.Join(want, "prog") {
			t.Errorf("image %q: %q, %v; want the program in %s", image, got, err, want)
		}
	}
	if _, err := p.commandPath("me/prog:1", "other", pathDir); err == nil {
		t.Error("a program in neither folder was found")
	}
}

func TestLocalizeMountPaths(t *testing.T) {
	pv := &podVolumes{mounts: []mount{{path: "/var/run/secrets/x", local: "/pods/p/var/run/secrets/x"}, {path: "/var/run/secrets/x/y", local: "/pods/p/var/run/secrets/x/y"}}}
	for in, want := range map[string]string{
		"/var/run/secrets/x/key":                "/pods/p/var/run/secrets/x/key",
		"k=/var/run/secrets/x/key":              "k=/pods/p/var/run/secrets/x/key",
		"a:/var/run/secrets/x,b":                "a:/pods/p/var/run/secrets/x,b",
		"/var/run/secrets/x/y/z":                "/pods/p/var/run/secrets/x/y/z",
		"/var/run/secrets/xyz":                  "/var/run/secrets/xyz",
		"/opt/var/run/secrets/x/key":            "/opt/var/run/secrets/x/key",
		"/var/run/secrets/x /var/run/secrets/x": "/pods/p/var/run/secrets/x /pods/p/var/run/secrets/x",
	} {
		if got := pv.localize(in); got != want {
			t.Errorf("localize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretVolume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pod")
	client := fake.NewSimpleClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
		Data: map[string][]byte{"key": []byte("the-secret"), "other": []byte("x")}})
	p := newProvider(providerConfig{nodeName: "n1", nodeIP: "127.0.0.1", client: client, logger: slog.Default()})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "s", Items: []corev1.KeyToPath{{Key: "key", Path: "key"}}}}}},
			Containers: []corev1.Container{{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "auth", MountPath: "/etc/auth"}}}},
		},
	}
	pv, err := p.mountVolumes(context.Background(), pod, dir)
	if err != nil {
		t.Fatal(err)
	}
	file := pv.localize("/etc/auth/key")
	if file != filepath.Join(dir, "etc/auth/key") {
		t.Fatalf("the mount path maps to %q", file)
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != "the-secret" {
		t.Fatalf("secret file: %q, %v", b, err)
	}
	for f, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "volumes", "auth"): 0o700, file: 0o600} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %#o", f, fi.Mode(), err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "volumes", "auth", "other")); err == nil {
		t.Error("a key not in the items was written")
	}
	unmount(dir)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the secret is still on disk after the pod ended: %v", err)
	}
}

// TestContainerEnvIsNotTheNodes: a pod's process gets a small base
// environment and what its spec says, never the node's own variables.
func TestContainerEnvIsNotTheNodes(t *testing.T) {
	t.Setenv("SPARKRPC_KUBELET_TEST_NODE_ONLY", "node-secret")
	p := newProvider(providerConfig{nodeName: "n1", nodeIP: "127.0.0.1", apiServer: "https://127.0.0.1:6443", logger: slog.Default()})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	env, err := p.containerEnv(pod, &pod.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		if strings.Contains(kv, "node-secret") {
			t.Fatalf("the pod got the node's variable: %q", env)
		}
	}
}
