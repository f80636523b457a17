package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A resource manager without node managers says so, with one prefix.
func TestSubmitWithoutNodeManagers(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil)
	for _, mode := range []string{"client", "cluster"} {
		_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "rm://"+c.addr, "--deploy-mode", mode, "--class", "SparkPi", "spark-internal")
		want := "sparkrpc: no node managers are registered with the resource manager at " + c.addr +
			": start one with 'sparkrpc nodemanager --rm " + c.addr + "'\n"
		if code != 1 || !strings.HasSuffix(stderr, want) || strings.Contains(stderr, "threshold") {
			t.Errorf("%s mode: exit %d, want 1 and %q:\n%s", mode, code, want, stderr)
		}
	}
	c.stop(t)
}

// Error messages carry one prefix, and no warning comes before a clean error.
func TestErrorsHaveOnePrefix(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "1g", "--cores", "2"})
	_, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "rm://"+c.addr, "--queue", "nope", "--class", "SparkPi", "spark-internal")
	if code != 1 || strings.Count(stderr, "cluster:") > 0 || !strings.Contains(stderr, "sparkrpc: submission of application_") ||
		!strings.Contains(stderr, "unknown queue") {
		t.Errorf("unknown queue: exit %d\n%s", code, stderr)
	}
	c.stop(t)
	// The driver's UI takes a free port: a driver running beside this test
	// may hold 4040, and moving off it is rightly a warning.
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--master", "rm://127.0.0.1:1", "--conf", "spark.ui.port=0", "--class", "SparkPi", "spark-internal")
	if code != 1 || !strings.HasPrefix(stderr, "sparkrpc: cannot reach the resource manager at 127.0.0.1:1") || strings.Contains(stderr, "WRN") {
		t.Errorf("dead resource manager: exit %d\n%s", code, stderr)
	}
}

// Asking for more executors than the cluster holds says so at once, and
// when the job proceeds; the job then runs on what there is.
func TestTooFewResourcesSaysSoAtOnce(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", "rm://"+c.addr, "--num-executors", "1000",
		"--executor-memory", "512m", "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=2s", "--class", "SparkPi", "spark-internal", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 4)
	want := "Warning: 1000 executors asked for, but the cluster's one node can hold at most 1 beside the application master. " +
		"The job proceeds when spark.scheduler.minRegisteredResourcesRatio (0.8) of them have registered, or after " +
		"spark.scheduler.maxRegisteredResourcesWaitingTime (2s).\n"
	if i, j := strings.Index(stderr, want), strings.Index(stderr, "Submitted application"); i < 0 || j < i {
		t.Errorf("stderr lacks %q before the submission:\n%s", want, stderr)
	}
	c.stop(t)
}

// An application that never brings up its driver fails as YARN's AM fails
// it, on a local master as on a cluster.
func TestNoSparkContextOnLocalMaster(t *testing.T) {
	marker := newMarker(t)
	for _, args := range [][]string{
		{"--master", "local[1]"},
		{"--master", "local-cluster[1,2,1536]", "--deploy-mode", "client"},
	} {
		args = append(append([]string{"submit"}, args...), "--conf", "spark.yarn.am.waitTime=500ms", "--class", "NoContextApp", "spark-internal")
		_, stderr, code := runBin(t, marker, time.Minute, args...)
		if code != 13 || !regexp.MustCompile(`(?m)^sparkrpc: SparkContext did not initialize after waiting for 500 ms`).MatchString(stderr) {
			t.Errorf("%v: exit %d, want 13\n%s", args, code, stderr)
		}
	}
}

// WordCount given a folder reads the files in it (not its hidden files nor
// subfolders), and an empty folder is a clear error.
func TestWordCountFolder(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"a.txt": strings.Repeat("the quick brown fox\n", 100), "b.txt": strings.Repeat("the lazy dog\n", 50),
		".hidden": "ignored words\n", "_SUCCESS": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--class", "WordCount", "spark-internal", dir, "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"the: 150\n", "fox: 100\n", "dog: 50\n", "Total: 550 words, 6 distinct\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	empty := t.TempDir()
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--class", "WordCount", "spark-internal", empty)
	if code != 1 || !strings.Contains(stderr, "sparkrpc: WordCount: the folder "+empty+" holds no files to read\n") {
		t.Fatalf("empty folder: exit %d\n%s", code, stderr)
	}
}

// A client command against a resource manager that is not there prints
// only its own message: no log line of the transport before it.
func TestClientCommandsQuietOnUnreachableRM(t *testing.T) {
	marker := newMarker(t)
	for _, args := range [][]string{
		{"apps", "--rm", "127.0.0.1:1"},
		{"logs", "--rm", "127.0.0.1:1", "application_1_0001"},
		{"submit", "--master", "rm://127.0.0.1:1", "--status", "application_1_0001"},
	} {
		_, stderr, code := runBin(t, marker, time.Minute, args...)
		if code != 1 || !strings.HasPrefix(stderr, "sparkrpc: ") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}
