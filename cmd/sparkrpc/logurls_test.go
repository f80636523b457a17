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
	var tracking string
	testutil.Eventually(t, time.Minute, "the driver's tracking URL", func() bool {
		if m := trackingRe.FindStringSubmatch(submit.stderr.String()); m != nil {
			tracking = m[1]
		}
		return tracking != ""
	})
	var logs, driverLogs map[string]string
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
		return logs != nil && driverLogs["stderr"] != ""
	})
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
