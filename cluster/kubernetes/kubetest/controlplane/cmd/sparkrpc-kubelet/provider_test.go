package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
