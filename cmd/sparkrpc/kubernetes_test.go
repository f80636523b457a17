package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSubmitKubernetesBadInput checks that bad k8s:// input is a clear
// error within seconds: usage errors exit 1 with the usage line (as every
// usage error of submit), the others exit 1 with the cause.
func TestSubmitKubernetesBadInput(t *testing.T) {
	marker := newMarker(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad scheme", []string{"--master", "k8s://ftp://h:1", "--class", "SparkPi", "spark-internal"}, 1, "the API server's scheme must be https or http"},
		{"bad port", []string{"--master", "k8s://h:99999", "--class", "SparkPi", "spark-internal"}, 1, "bad API server port"},
		{"bad submission id", []string{"--master", "k8s://127.0.0.1:1", "--kill", "ns:"}, 1, "want NAMESPACE:DRIVER_POD"},
		{"no image", []string{"--master", "k8s://127.0.0.1:1", "--class", "SparkPi", "spark-internal"}, 1, "must specify the executor container image"},
		{"unreachable", []string{"--master", "k8s://https://127.0.0.1:1",
			"--conf", "spark.kubernetes.container.image=sparkrpc:test", "--conf", "spark.kubernetes.submission.connectionTimeout=500",
			"--class", "SparkPi", "spark-internal"},
			1, "API server unreachable"},
		{"status unreachable", []string{"--master", "k8s://https://127.0.0.1:1", "--status", "default:app-*",
			"--conf", "spark.kubernetes.submission.requestTimeout=500"}, 1, "API server unreachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, stderr, code := runBin(t, marker, 30*time.Second, append([]string{"submit"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tc.code, tc.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}
