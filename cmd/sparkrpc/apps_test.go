package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// `sparkrpc apps` lists a resource manager's applications, by default those
// that have not ended; `sparkrpc logs` prints every container's stdout and
// stderr with a header. The daemons log JSON, and so do the containers they
// start, without a field twice.
func TestAppsAndLogs(t *testing.T) {
	marker := newMarker(t)
	json := []string{"--log-format", "json", "--log-level", "debug"}
	c := startRMCluster(t, marker, json, append([]string{"--memory", "2g", "--cores", "2"}, json...))
	master := "rm://" + c.addr

	// One application that ends, one that keeps running.
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", master, "--deploy-mode", "cluster",
		"--num-executors", "1", "--executor-memory", "512m", "--driver-memory", "512m", "--name", "short pi", "--class", "SparkPi", "spark-internal", "4")
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	done := m[1]
	_, stderr, code = runBin(t, marker, time.Minute, "submit", "--master", master, "--deploy-mode", "cluster",
		"--num-executors", "1", "--executor-memory", "512m", "--driver-memory", "512m",
		"--conf", "spark.yarn.submit.waitAppCompletion=false", "--conf", "spark.examples.sparkPi.taskDelay=200ms",
		"--name", "long pi", "--class", "SparkPi", "spark-internal", "1000")
	m = appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	running := m[1]

	row := func(out, id string) string {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, id+" ") {
				return line
			}
		}
		return ""
	}
	var out string
	testutil.Eventually(t, time.Minute, "the second application to run", func() bool {
		out, _, code = runBin(t, marker, 30*time.Second, "apps", "--rm", c.addr)
		return code == 0 && strings.Contains(row(out, running), " RUNNING ")
	})
	if !strings.HasPrefix(out, "Total number of applications (states: [SUBMITTED, ACCEPTED, RUNNING]): 1\n") || row(out, done) != "" ||
		!regexp.MustCompile(`\blong pi +\S+ +default +RUNNING +UNDEFINED +\d+% +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ +http://127\.0\.0\.1:\d+$`).MatchString(row(out, running)) {
		t.Fatalf("apps:\n%s", out)
	}
	out, _, code = runBin(t, marker, 30*time.Second, "apps", "--rm", "rm://"+c.addr, "--state", "finished,killed")
	if code != 0 || !strings.Contains(out, "(states: [FINISHED, KILLED]): 1\n") ||
		!regexp.MustCompile(`\bshort pi +\S+ +default +FINISHED +SUCCEEDED +100% `).MatchString(row(out, done)) || row(out, running) != "" {
		t.Fatalf("apps --state finished,killed: exit %d\n%s", code, out)
	}
	out, _, code = runBin(t, marker, 30*time.Second, "apps", "--rm", c.addr, "--state", "ALL")
	if code != 0 || row(out, done) == "" || row(out, running) == "" || strings.Index(out, done) > strings.Index(out, running) {
		t.Fatalf("apps --state ALL: exit %d\n%s", code, out)
	}
	_, stderr, code = runBin(t, marker, 30*time.Second, "apps", "--rm", c.addr, "--state", "DONE")
	if code == 0 || !strings.Contains(stderr, `invalid application state "DONE"`) || !strings.Contains(stderr, "usage: ") {
		t.Fatalf("apps --state DONE: exit %d\n%s", code, stderr)
	}

	// The logs of the finished application: the AM's (with the driver's
	// output, in cluster mode) and the executor's.
	out, stderr, code = runBin(t, marker, time.Minute, "logs", "--rm", c.addr, done)
	if code != 0 {
		t.Fatalf("logs: exit %d\n%s", code, stderr)
	}
	for _, ct := range []string{"000001", "000002"} {
		for _, f := range []string{"stdout", "stderr"} {
			re := `(?s)Container: container_\d+_\d{4}_01_` + ct + ` on 127\.0\.0\.1:\d+\n=+\nLogType:` + f +
				`\nLogLastModifiedTime:[^\n]+\nLogLength:\d+\nLogContents:\n.*?End of LogType:` + f + `\n\*+\n`
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("logs lack %s of container %s:\n%s", f, ct, out)
			}
		}
	}
	checkPi(t, out, 4)
	recs := jsonRecords(t, "container logs", out)
	for _, p := range []string{"applicationmaster", "executor"} {
		if countRecords(recs, map[string]string{"process": p}) == 0 {
			t.Errorf("no JSON record of the %s in the logs:\n%s", p, out)
		}
	}
	// Only the stderr of the AM.
	amContainer := regexp.MustCompile(`container_\d+_\d{4}_01_000001`).FindString(out)
	out, _, code = runBin(t, marker, time.Minute, "logs", "--rm", c.addr, done, "--container", amContainer, "--log-files", "stderr")
	if code != 0 || strings.Count(out, "\nLogType:") != 1 || !strings.Contains(out, "Container: "+amContainer) || !strings.Contains(out, "LogType:stderr") {
		t.Fatalf("logs of the AM's stderr: exit %d\n%s", code, out)
	}
	_, stderr, code = runBin(t, marker, 30*time.Second, "logs", "--rm", c.addr, "application_1_0042")
	if code != 1 || !strings.Contains(stderr, "doesn't exist") {
		t.Fatalf("logs of an unknown application: exit %d\n%s", code, stderr)
	}

	if _, _, code := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--kill", running); code != 0 {
		t.Fatalf("kill exit %d", code)
	}
	c.stop(t)
	jsonRecords(t, "resource manager", c.rm.stderr.String())
	if n := len(jsonRecords(t, "node manager", c.nms[0].stderr.String())); n == 0 {
		t.Errorf("the node manager logged no JSON:\n%s", c.nms[0].stderr)
	}
}
