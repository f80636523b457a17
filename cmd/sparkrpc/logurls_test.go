package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// On a resource manager an executor's log links, as the driver's UI lists
// them, are http URLs of its node manager's UI that return the executor's
// output as text; in cluster mode the driver's row links its container's
// logs too.
func TestExecutorLogURLsOnResourceManager(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	nmUI := uiURL(t, c.nms[0], "NodeManager")
	submit := start(t, marker, "submit", "--master", "rm://"+c.addr, "--deploy-mode", "cluster", "--num-executors", "1",
		"--executor-memory", "512m", "--driver-memory", "512m", "--conf", "spark.ui.port=0",
		"--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "2000")
	tracking := trackingURL(t, submit)
	logs, driverLogs := executorLogURLs(t, tracking, true)
	if u := driverLogs["stderr"]; !strings.HasPrefix(u, nmUI+"/node/containerlogs/container_") {
		t.Fatalf("the driver's stderr log URL %q, want one of %s", u, nmUI)
	} else if code, body := httpGet(t, u); code != http.StatusOK || !strings.Contains(body, "applicationmaster") {
		t.Fatalf("GET %s = %d, not the application master's log:\n%s", u, code, body)
	}
	for _, name := range []string{"stdout", "stderr"} {
		u := logs[name]
		if !strings.HasPrefix(u, nmUI+"/node/containerlogs/container_") || !strings.HasSuffix(u, "/"+name+"?start=-4096") {
			t.Fatalf("%s log URL %q, want one of %s", name, u, nmUI)
		}
		code, body := httpGet(t, u)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", u, code, body)
		}
		if name == "stderr" && body == "" {
			t.Fatalf("GET %s: the executor's stderr is empty", u)
		}
	}
	// The node manager's containers page links them.
	if code, page := httpGet(t, nmUI+"/"); code != http.StatusOK || !strings.Contains(page, "/stderr?start=-4096") {
		t.Fatalf("NM page = %d\n%s", code, page)
	}
	if err := submit.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	submit.wait(t, time.Minute)
	c.stop(t)
}

// On local-cluster, as on a resource manager, an executor's log links are
// http URLs of its (embedded) node manager's UI that return its output.
func TestExecutorLogURLsOnLocalCluster(t *testing.T) {
	marker := newMarker(t)
	submit := start(t, marker, "submit", "--master", "local-cluster[1,1,512]", "--executor-memory", "512m",
		"--conf", "spark.ui.port=0", "--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "2000")
	logs, _ := executorLogURLs(t, trackingURL(t, submit), false)
	for _, name := range []string{"stdout", "stderr"} {
		u := logs[name]
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/node/containerlogs/container_") {
			t.Fatalf("%s log URL %q, want one of an embedded node manager's UI", name, u)
		}
		code, body := httpGet(t, u)
		if code != http.StatusOK || name == "stderr" && body == "" {
			t.Fatalf("GET %s = %d, want the executor's %s:\n%s", u, code, name, body)
		}
	}
	if err := submit.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	submit.wait(t, time.Minute)
}

// trackingURL waits for the tracking URL that submit prints.
func trackingURL(t *testing.T, submit *proc) string {
	t.Helper()
	var tracking string
	testutil.Eventually(t, time.Minute, "the driver's tracking URL", func() bool {
		if m := trackingRe.FindStringSubmatch(submit.stderr.String()); m != nil {
			tracking = m[1]
		}
		return tracking != ""
	})
	return tracking
}

// executorLogURLs waits until the driver's UI at tracking lists an executor
// with log URLs (and, with withDriver, the driver's row with a stderr URL),
// and returns the executor's and the driver's log URLs.
func executorLogURLs(t *testing.T, tracking string, withDriver bool) (logs, driverLogs map[string]string) {
	t.Helper()
	testutil.Eventually(t, time.Minute, "an executor with its log URLs", func() bool {
		code, body := httpGet(t, tracking+"/api/v1/applications")
		var apps []struct {
			ID string `json:"id"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &apps) != nil || len(apps) == 0 {
			return false
		}
		code, body = httpGet(t, tracking+"/api/v1/applications/"+apps[0].ID+"/executors")
		var execs []struct {
			ID   string            `json:"id"`
			Logs map[string]string `json:"executorLogs"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &execs) != nil {
			return false
		}
		for _, e := range execs {
			if e.ID == "driver" {
				driverLogs = e.Logs
			} else if len(e.Logs) > 0 {
				logs = e.Logs
			}
		}
		return logs != nil && (!withDriver || driverLogs["stderr"] != "")
	})
	return logs, driverLogs
}
