package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --status and --kill on a k8s:// master read their configuration as every
// other client command does: --conf spark.authenticate.secret=... is
// refused (a command line is readable by every user of the machine), and
// --properties-file is read (a missing one is an error).
func TestKubernetesActionsReadConfAsOtherCommands(t *testing.T) {
	marker := newMarker(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	base := []string{"submit", "--master", "k8s://https://127.0.0.1:1", "--status", "default:app-driver",
		"--conf", "spark.kubernetes.submission.requestTimeout=500"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"secret on the command line", []string{"--conf", "spark.authenticate.secret=s3cr3t"}, "spark.authenticate.secret must not be given with --conf"},
		{"missing properties file", []string{"--properties-file", filepath.Join(t.TempDir(), "missing.properties")}, "--properties-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBin(t, marker, 30*time.Second, append(append([]string{}, base...), tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, tc.want)
			}
		})
	}
}
