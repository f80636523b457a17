package webui_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/webui"
)

type executorJSON struct {
	ID             string            `json:"id"`
	HostPort       string            `json:"hostPort"`
	IsActive       bool              `json:"isActive"`
	TotalCores     int               `json:"totalCores"`
	ActiveTasks    int               `json:"activeTasks"`
	CompletedTasks int               `json:"completedTasks"`
	FailedTasks    int               `json:"failedTasks"`
	LastHeartbeat  string            `json:"lastHeartbeat"`
	ExecutorLogs   map[string]string `json:"executorLogs"`
}

type jobJSON struct {
	JobID               int64  `json:"jobId"`
	Name                string `json:"name"`
	Status              string `json:"status"`
	NumTasks            int    `json:"numTasks"`
	NumActiveTasks      int    `json:"numActiveTasks"`
	NumCompletedTasks   int    `json:"numCompletedTasks"`
	NumCompletedIndices int    `json:"numCompletedIndices"`
	SubmissionTime      string `json:"submissionTime"`
	CompletionTime      string `json:"completionTime"`
	StageIDs            []int  `json:"stageIds"`
}

const testApp = "app-20261203-0001"

func newDriverUI(t *testing.T, c *endpoints.LocalCluster, opts ...webui.Option) string {
	u := webui.NewDriverUI(c.Driver, webui.AppInfo{ID: testApp, Name: "ui test", User: "tester"}, opts...)
	return serve(t, u).URL
}

// The pages and the REST API follow a job: running tasks, then the
// completed ones, per executor and per job.
func TestDriverUIFollowsAJob(t *testing.T) {
	c := startCluster(t, 2, 2)
	base := newDriverUI(t, c)
	api := base + "/api/v1/applications/" + testApp

	var apps []struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Attempts []struct {
			SparkUser string `json:"sparkUser"`
			Completed bool   `json:"completed"`
			StartTime string `json:"startTime"`
		} `json:"attempts"`
	}
	getJSON(t, base+"/api/v1/applications", &apps)
	if len(apps) != 1 || apps[0].ID != testApp || apps[0].Name != "ui test" || len(apps[0].Attempts) != 1 ||
		apps[0].Attempts[0].SparkUser != "tester" || apps[0].Attempts[0].Completed || !strings.HasSuffix(apps[0].Attempts[0].StartTime, "GMT") {
		t.Fatalf("applications = %+v", apps)
	}

	var app struct {
		ID string `json:"id"`
	}
	getJSON(t, api, &app)
	if app.ID != testApp {
		t.Fatalf("applications/%s = %+v", testApp, app)
	}

	payloads, gate := gatedPayloads(t, 6)
	done := runJob(c.Driver, gateTask, payloads)
	// 2 executors × 2 cores: 4 tasks run, 2 wait.
	testutil.Eventually(t, testTimeout, "4 running tasks in the jobs API", func() bool {
		var jobs []jobJSON
		getJSON(t, api+"/jobs", &jobs)
		return len(jobs) == 1 && jobs[0].Status == "RUNNING" && jobs[0].NumActiveTasks == 4 && jobs[0].NumTasks == 6
	})
	var execs []executorJSON
	// (The HeartbeatReceiver learns of a registration by a one-way message.)
	testutil.Eventually(t, testTimeout, "both executors' heartbeats", func() bool {
		getJSON(t, api+"/executors", &execs)
		return len(execs) == 2 && execs[0].LastHeartbeat != "" && execs[1].LastHeartbeat != ""
	})
	if len(execs) != 2 || execs[0].ID != "1" || execs[1].ID != "2" {
		t.Fatalf("executors = %+v", execs)
	}
	for _, e := range execs {
		if !e.IsActive || e.TotalCores != 2 || e.ActiveTasks != 2 || e.HostPort == "" || e.LastHeartbeat == "" || e.ExecutorLogs == nil {
			t.Fatalf("executor %+v; want active, 2 cores, 2 tasks running, an address and a heartbeat", e)
		}
	}
	code, page := get(t, base+"/jobs/", "")
	if code != http.StatusOK || !strings.Contains(page, "Active Jobs (1)") || !strings.Contains(page, "0/6 (4 running)") {
		t.Fatalf("/jobs/ = %d:\n%s", code, page)
	}
	code, page = get(t, base+"/executors/", "")
	if code != http.StatusOK || !strings.Contains(page, `data-executor="1"`) || !strings.Contains(page, `data-executor="2"`) ||
		!strings.Contains(page, `<span id="executors-active">2</span>`) {
		t.Fatalf("/executors/ = %d:\n%s", code, page)
	}

	gate.Open()
	if err := testutil.Recv(t, done, time.Minute, "the job"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testTimeout, "the job SUCCEEDED in the API", func() bool {
		var j jobJSON
		getJSON(t, api+"/jobs/0", &j)
		return j.Status == "SUCCEEDED" && j.NumCompletedTasks == 6 && j.NumCompletedIndices == 6 && j.NumActiveTasks == 0 && j.CompletionTime != ""
	})
	getJSON(t, api+"/executors", &execs)
	if execs[0].CompletedTasks+execs[1].CompletedTasks != 6 || execs[0].ActiveTasks+execs[1].ActiveTasks != 0 {
		t.Fatalf("executors after the job = %+v; want 6 completed, none active", execs)
	}
	var running []jobJSON
	getJSON(t, api+"/jobs?status=RUNNING", &running)
	if len(running) != 0 {
		t.Fatalf("jobs?status=RUNNING = %+v", running)
	}
	code, page = get(t, base+"/jobs/", "")
	if code != http.StatusOK || !strings.Contains(page, "Completed Jobs (1)") || !strings.Contains(page, "SUCCEEDED") {
		t.Fatalf("/jobs/ after the job = %d:\n%s", code, page)
	}

	// A removed executor leaves /executors and shows in /allexecutors.
	if err := c.Driver.RemoveExecutor("2", "removed by the test"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, testTimeout, "executor 2 gone from /executors", func() bool {
		getJSON(t, api+"/executors", &execs)
		return len(execs) == 1 && execs[0].ID == "1"
	})
	var all []executorJSON
	getJSON(t, api+"/allexecutors", &all)
	if len(all) != 2 || all[1].ID != "2" || all[1].IsActive {
		t.Fatalf("allexecutors = %+v", all)
	}
	code, page = get(t, base+"/executors/", "")
	if code != http.StatusOK || !strings.Contains(page, "removed by the test") {
		t.Fatalf("/executors/ after removal = %d:\n%s", code, page)
	}
}

// The endpoints page lists the driver env's endpoints with their mailbox
// depth and message counts.
func TestDriverUIEndpointsPage(t *testing.T) {
	c := startCluster(t, 1, 1)
	base := newDriverUI(t, c)
	code, page := get(t, base+"/endpoints/", "")
	for _, want := range []string{`data-endpoint="CoarseGrainedScheduler"`, `data-endpoint="HeartbeatReceiver"`, "Mailbox depth", "Messages/s"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("/endpoints/ = %d, no %q:\n%s", code, want, page)
		}
	}
	// The first view has no rate yet; once a window passed, the heartbeat
	// receiver (executors heartbeat every 100ms) shows messages handled
	// and a rate.
	hb := regexp.MustCompile(`data-endpoint="HeartbeatReceiver"><td>HeartbeatReceiver</td><td class="num">\d+</td><td class="num">([1-9]\d*)</td><td class="num">(\d+\.\d)</td>`)
	testutil.Eventually(t, testTimeout, "a message rate for the HeartbeatReceiver", func() bool {
		_, page = get(t, base+"/endpoints/", "")
		return hb.MatchString(page)
	})
}

// Bad ids and unknown API routes get 404 with a JSON error body; the root
// redirects to the jobs page.
func TestDriverUIErrors(t *testing.T) {
	c := startCluster(t, 1, 1)
	base := newDriverUI(t, c)
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/applications/nope", "unknown app: nope"},
		{"/api/v1/applications/nope/executors", "unknown app: nope"},
		{"/api/v1/applications/nope/allexecutors", "unknown app: nope"},
		{"/api/v1/applications/nope/jobs", "unknown app: nope"},
		{"/api/v1/applications/" + testApp + "/jobs/42", "unknown job: 42"},
		{"/api/v1/applications/" + testApp + "/jobs/x", "unknown job: x"},
		{"/api/v1/stages", "no such API route"},
		{"/metrics", "no metrics are served here"},
	} {
		t.Run(tc.path, func(t *testing.T) { wantJSONError(t, base+tc.path, http.StatusNotFound, tc.want) })
	}
	code, _ := get(t, base+"/nope/", "")
	if code != http.StatusNotFound {
		t.Fatalf("/nope/ = %d, want 404", code)
	}
	code, page := get(t, base+"/", "")
	if code != http.StatusOK || !strings.Contains(page, "Active Jobs") {
		t.Fatalf("/ = %d, want the jobs page:\n%s", code, page)
	}
}

// /metrics serves the handler given with WithMetrics.
func TestDriverUIMetrics(t *testing.T) {
	c := startCluster(t, 1, 1)
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("sparkrpc_test_total 1\n"))
	})
	base := newDriverUI(t, c, webui.WithMetrics(metrics))
	code, body := get(t, base+"/metrics", "")
	if code != http.StatusOK || body != "sparkrpc_test_total 1\n" {
		t.Fatalf("/metrics = %d %q", code, body)
	}
}
