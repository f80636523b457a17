package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// selfKill is the test program whose application kills itself
// (`submit --kill`) and then returns successfully.
func selfKill(t *testing.T) string { return program(t, "../../internal/testprog/selfkill") }

// `submit --kill` that lands just before a client-mode application returns:
// the resource manager ends the application KILLED (as `apps` and --status
// then say), and submit prints that final report ("final status: KILLED").
// submit must not exit 0 then: it exits 0 only if the application
// succeeded. Before, a kill that landed between two of the driver's report
// polls went unnoticed by the driver, and submit printed the KILLED report
// and exited 0.
func TestClientModeKillRacingTheEndIsNotASuccess(t *testing.T) {
	prog := selfKill(t)
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	master := "rm://" + c.addr
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "submit", "--master", master, "--deploy-mode", "client",
		"--num-executors", "1", "--executor-memory", "512m", "--conf", "spark.ui.enabled=false",
		"--conf", "spark.yarn.report.interval=10s", prog)
	m := appIDRe.FindStringSubmatch(stderr)
	if m == nil || !strings.Contains(stdout, "Killed application "+m[1]) {
		t.Fatalf("the kill did not land: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	status, _, _ := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", m[1])
	if !strings.Contains(status, "final status: KILLED") {
		t.Fatalf("status:\n%s", status)
	}
	if code == 0 {
		t.Fatalf("the application was KILLED (%s), yet submit exited 0\nstderr:\n%s", regexp.MustCompile(`final status: \w+`).FindAllString(stderr, -1), stderr)
	}
	t.Logf("submit exited %d:\n%s", code, stderr[max(0, len(stderr)-400):])
}
