package webui_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/webui"
)

const storeApp = "app-20261203-0042"

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// replay feeds a store the events of a short application: two executors
// (one removed), a job that succeeded, one that failed, one running.
func replay(s *webui.AppStore, ended bool) {
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	evs := []endpoints.Event{
		endpoints.ApplicationStart{Time: at(0), AppID: storeApp, AppName: "replayed", User: "alice", Version: "1.2.3",
			DriverHostPort: "driver-host:7077", DriverLogURLs: map[string]string{"stdout": "http://nm/driver/stdout"}},
		endpoints.EnvironmentUpdate{Time: at(0), Properties: [][2]string{{"spark.app.name", "replayed"}, {"spark.password", webui.RedactedText}},
			Runtime: map[string]string{webui.RuntimeGoVersion: "go1.26", webui.RuntimePlatform: "linux/amd64", webui.RuntimeVersion: "1.2.3"}},
		endpoints.ExecutorAdded{Time: at(1), ExecutorID: "1", Host: "h1", Address: actor.RpcAddress{Host: "h1", Port: 1001}, Cores: 2},
		endpoints.ExecutorAdded{Time: at(1), ExecutorID: "2", Host: "h2", Address: actor.RpcAddress{Host: "h2", Port: 1002}, Cores: 2},
		endpoints.JobStart{Time: at(2), JobID: 1, TaskName: "ok", NumTasks: 2},
		endpoints.TaskStart{Time: at(2), JobID: 1, TaskID: 10, Partition: 0, ExecutorID: "1"},
		endpoints.TaskStart{Time: at(2), JobID: 1, TaskID: 11, Partition: 1, ExecutorID: "2"},
		endpoints.TaskEnd{Time: at(3), JobID: 1, TaskID: 10, Partition: 0, ExecutorID: "1", State: messages.TaskState_TASK_STATE_FINISHED,
			Duration: time.Second, RunTime: 900 * time.Millisecond, ResultSize: 2048},
		endpoints.TaskEnd{Time: at(5), JobID: 1, TaskID: 11, Partition: 1, ExecutorID: "2", State: messages.TaskState_TASK_STATE_FINISHED,
			Duration: 3 * time.Second, RunTime: 2900 * time.Millisecond, ResultSize: 10},
		endpoints.JobEnd{Time: at(5), JobID: 1, Duration: 3 * time.Second},
		endpoints.JobStart{Time: at(6), JobID: 2, TaskName: "bad", NumTasks: 1},
		endpoints.TaskStart{Time: at(6), JobID: 2, TaskID: 12, Partition: 0, ExecutorID: "2"},
		endpoints.TaskEnd{Time: at(7), JobID: 2, TaskID: 12, Partition: 0, ExecutorID: "2", State: messages.TaskState_TASK_STATE_FAILED,
			Duration: time.Second, Error: "boom: first line\nstack line 1\nstack line 2"},
		endpoints.JobEnd{Time: at(7), JobID: 2, Err: errors.New("task 0 failed: boom")},
		endpoints.ExecutorRemoved{Time: at(8), ExecutorID: "2", Reason: "killed by the test"},
		endpoints.JobStart{Time: at(9), JobID: 3, TaskName: "slow", NumTasks: 1},
		endpoints.TaskStart{Time: at(9), JobID: 3, TaskID: 13, Partition: 0, ExecutorID: "1"},
	}
	if ended {
		evs = append(evs, endpoints.ApplicationEnd{Time: at(20), Error: "the application failed"})
	}
	for _, e := range evs {
		s.OnEvent(e)
	}
}

// A store fed events alone holds everything the pages and the REST API
// show: the application, its environment, the driver's row, executors,
// jobs and their tasks.
func TestAppStoreServesThePagesFromEventsAlone(t *testing.T) {
	store := webui.NewAppStore()
	replay(store, true)
	if !store.Completed() || store.Info().Name != "replayed" || store.Info().End != t0.Add(20*time.Second) {
		t.Fatalf("Info() = %+v, Completed() = %v", store.Info(), store.Completed())
	}
	url := serve(t, webui.NewApplicationUI(store)).URL
	api := url + "/api/v1/applications/" + storeApp

	var apps []webui.ApplicationInfo
	getJSON(t, url+"/api/v1/applications", &apps)
	if len(apps) != 1 || apps[0].ID != storeApp || !apps[0].Attempts[0].Completed || apps[0].Attempts[0].Duration != 20000 ||
		apps[0].Attempts[0].SparkUser != "alice" || apps[0].Attempts[0].AppSparkVersion != "1.2.3" {
		t.Fatalf("applications = %+v", apps)
	}

	var execs []executorJSON
	getJSON(t, api+"/executors", &execs)
	if len(execs) != 2 || execs[0].ID != "driver" || execs[0].HostPort != "driver-host:7077" || !execs[0].IsActive ||
		execs[0].ExecutorLogs["stdout"] != "http://nm/driver/stdout" || execs[1].ID != "1" || execs[1].CompletedTasks != 1 || execs[1].ActiveTasks != 1 {
		t.Fatalf("executors = %+v", execs)
	}
	getJSON(t, api+"/allexecutors", &execs)
	if len(execs) != 3 || execs[2].ID != "2" || execs[2].IsActive || execs[2].FailedTasks != 1 {
		t.Fatalf("allexecutors = %+v", execs)
	}

	var jobs []jobJSON
	getJSON(t, api+"/jobs", &jobs)
	if len(jobs) != 3 || jobs[0].Status != "RUNNING" || jobs[1].Status != "FAILED" || jobs[2].Status != "SUCCEEDED" || jobs[2].NumCompletedIndices != 2 {
		t.Fatalf("jobs = %+v", jobs)
	}
	// One stage a job, numbered as the job (its taskList route's).
	for _, j := range jobs {
		if len(j.StageIDs) != 1 || int64(j.StageIDs[0]) != j.JobID {
			t.Fatalf("job %d's stageIds = %v, want [%d]", j.JobID, j.StageIDs, j.JobID)
		}
	}

	var env struct {
		Runtime         map[string]string `json:"runtime"`
		SparkProperties [][2]string       `json:"sparkProperties"`
	}
	getJSON(t, api+"/environment", &env)
	if env.Runtime["goVersion"] != "go1.26" || env.Runtime["sparkrpcVersion"] != "1.2.3" || len(env.SparkProperties) != 2 ||
		env.SparkProperties[1][1] != webui.RedactedText {
		t.Fatalf("environment = %+v", env)
	}

	type taskJSON struct {
		TaskID       int64  `json:"taskId"`
		Index        int    `json:"index"`
		Attempt      int    `json:"attempt"`
		LaunchTime   string `json:"launchTime"`
		Duration     *int64 `json:"duration"`
		ExecutorID   string `json:"executorId"`
		Host         string `json:"host"`
		Status       string `json:"status"`
		ErrorMessage string `json:"errorMessage"`
		TaskMetrics  struct {
			ExecutorRunTime int64 `json:"executorRunTime"`
			ResultSize      int64 `json:"resultSize"`
		} `json:"taskMetrics"`
	}
	var tasks []taskJSON
	getJSON(t, api+"/stages/1/0/taskList?sortBy=-runtime", &tasks)
	if len(tasks) != 2 || tasks[0].TaskID != 11 || tasks[0].Host != "h2" || tasks[0].TaskMetrics.ExecutorRunTime != 2900 ||
		tasks[1].TaskMetrics.ResultSize != 2048 || *tasks[1].Duration != 1000 || tasks[1].Status != "SUCCESS" ||
		tasks[1].LaunchTime != "2026-12-03T10:00:02.000GMT" {
		t.Fatalf("taskList = %+v", tasks)
	}
	getJSON(t, api+"/stages/1/0/taskList?offset=1&length=5", &tasks)
	if len(tasks) != 1 || tasks[0].TaskID != 11 {
		t.Fatalf("taskList offset 1 = %+v", tasks)
	}
	getJSON(t, api+"/stages/2/0/taskList", &tasks)
	if len(tasks) != 1 || tasks[0].Status != "FAILED" || !strings.HasPrefix(tasks[0].ErrorMessage, "boom: first line\n") {
		t.Fatalf("taskList of the failed job = %+v", tasks)
	}
	var running []taskJSON
	getJSON(t, api+"/stages/3/0/taskList", &running)
	if len(running) != 1 || running[0].Status != "RUNNING" || running[0].Duration != nil {
		t.Fatalf("taskList of the running job = %+v", running)
	}
	wantJSONError(t, api+"/stages/9/0/taskList", http.StatusNotFound, "unknown stage: 9")
	wantJSONError(t, api+"/stages/1/1/taskList", http.StatusNotFound, "unknown stage: 1")
	wantJSONError(t, api+"/stages/1/0/taskList?sortBy=nope", http.StatusBadRequest, "unknown sortBy")

	pages := map[string][]string{
		"/jobs/": {`id="app-timeline"`, `class="SUCCEEDED"`, `class="FAILED"`, `class="RUNNING"`, `class="added"`,
			`Executor 2 removed at`, `killed by the test`, `href="/jobs/job/?id=1"`, `<td class="duration">3 s</td>`,
			`<td class="duration">11 s</td>`, "the application failed"},
		"/jobs/job/?id=2": {`id="task-table"`, `id="job-timeline"`, "<summary>boom: first line</summary>", "stack line 2",
			`data-task="12"`, "FAILED", "task 0 failed: boom"},
		"/jobs/job/?id=1": {`<td class="num">0.9 s</td>`, `2.0 KiB`, `data-task="10"`, `data-task="11"`},
		"/executors/":     {`data-executor="driver"`, "driver-host:7077", `data-executor="2"`, "killed by the test"},
		"/environment/":   {"go1.26", "linux/amd64", `data-key="spark.password"`, "replayed"},
	}
	for path, wants := range pages {
		code, body := get(t, url+path, "")
		if code != http.StatusOK {
			t.Fatalf("%s = %d: %s", path, code, body)
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in\n%s", path, w, body)
			}
		}
		// The pages a live driver has alone are left out of the nav.
		if strings.Contains(body, `href="/endpoints/"`) || strings.Contains(body, "Dynamic allocation") {
			t.Errorf("%s links a live-only page", path)
		}
	}
	if code, _ := get(t, url+"/endpoints/", ""); code != http.StatusNotFound {
		t.Fatalf("/endpoints/ without a live driver = %d", code)
	}
	if code, _ := get(t, url+"/jobs/job/?id=77", ""); code != http.StatusNotFound {
		t.Fatalf("an unknown job's page = %d", code)
	}
}

// The task table is sorted by each column and paged with Spark's
// parameters.
func TestJobPageSortsAndPagesTasks(t *testing.T) {
	store := webui.NewAppStore()
	store.OnEvent(endpoints.ApplicationStart{Time: t0, AppID: storeApp, AppName: "sorting"})
	store.OnEvent(endpoints.JobStart{Time: t0, JobID: 1, TaskName: "t", NumTasks: 30})
	for i := range 30 {
		ex := fmt.Sprint(1 + i%3)
		store.OnEvent(endpoints.TaskStart{Time: t0, JobID: 1, TaskID: int64(100 + i), Partition: 29 - i, ExecutorID: ex})
		store.OnEvent(endpoints.TaskEnd{Time: t0.Add(time.Second), JobID: 1, TaskID: int64(100 + i), Partition: 29 - i, ExecutorID: ex,
			State: messages.TaskState_TASK_STATE_FINISHED, Duration: time.Duration(i) * time.Millisecond, ResultSize: int64(1000 - i)})
	}
	url := serve(t, webui.NewApplicationUI(store)).URL
	taskIDs := regexp.MustCompile(`data-task="(\d+)"`)
	ids := func(query string) []string {
		_, body := get(t, url+"/jobs/job/?id=1&"+query, "")
		var out []string
		for _, m := range taskIDs.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, tc := range []struct {
		name, query string
		want        string
	}{
		{"by index (the default)", "task.pageSize=3", "[129 128 127]"},
		{"by task id", "task.sort=Task+ID&task.pageSize=3", "[100 101 102]"},
		{"by task id, descending", "task.sort=Task+ID&task.desc=true&task.pageSize=3", "[129 128 127]"},
		{"by duration, second page", "task.sort=Duration&task.page=2&task.pageSize=3", "[103 104 105]"},
		{"by result size", "task.sort=Result+Size&task.pageSize=2", "[129 128]"},
		{"by executor, descending", "task.sort=Executor+ID&task.desc=true&task.pageSize=2", "[102 105]"},
		{"a page past the last shows the last", "task.page=99&task.pageSize=7", "[101 100]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(ids(tc.query)); got != tc.want {
				t.Fatalf("tasks = %s, want %s", got, tc.want)
			}
		})
	}
}

// hrefs finds every link target of a page.
var hrefs = regexp.MustCompile(`(?:href|action|src)="([^"]*)"`)

// Mounted under a base path, every link of every page starts with it, and
// the pages answer through http.StripPrefix as a history server mounts
// them.
func TestApplicationUIUnderABasePath(t *testing.T) {
	store := webui.NewAppStore()
	replay(store, false)
	const base = "/history/" + storeApp
	mux := http.NewServeMux()
	mux.Handle(base+"/", http.StripPrefix(base, webui.NewApplicationUI(store, webui.WithBasePath(base+"/"))))
	url := serve(t, mux).URL

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+"/", nil))
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusFound || loc != base+"/jobs/" {
		t.Fatalf("%s/ = %d to %q", base, rec.Code, loc)
	}
	for _, p := range []string{"/jobs/", "/jobs/job/?id=1", "/jobs/job/?id=2", "/executors/", "/environment/"} {
		code, body := get(t, url+base+p, "")
		if code != http.StatusOK {
			t.Fatalf("%s = %d: %s", p, code, body)
		}
		links := hrefs.FindAllStringSubmatch(body, -1)
		if len(links) < 3 {
			t.Fatalf("%s: only %d links", p, len(links))
		}
		for _, m := range links {
			if !strings.HasPrefix(m[1], base+"/") && !strings.HasPrefix(m[1], "http://nm/") {
				t.Errorf("%s: link %q is not under %s", p, m[1], base)
			}
		}
	}
	var app webui.ApplicationInfo
	getJSON(t, url+base+"/api/v1/applications/"+storeApp, &app)
	if app.ID != storeApp || app.Attempts[0].Completed || app.Attempts[0].EndTimeEpoch != -1 {
		t.Fatalf("application under the base = %+v", app)
	}
	// Spark writes the epoch's -1 ms beside endTimeEpoch -1.
	if got := app.Attempts[0].EndTime; got != "1969-12-31T23:59:59.999GMT" {
		t.Errorf("a running application's endTime = %q, want Spark's 1969-12-31T23:59:59.999GMT", got)
	}
}

// In local mode the driver's process runs the one executor, whose id is
// the driver's: the executors list has one row for it, the driver's, with
// the executor's cores and the driver's logs.
func TestLocalModeHasOneDriverRow(t *testing.T) {
	store := webui.NewAppStore()
	store.OnEvent(endpoints.ApplicationStart{Time: t0, AppID: storeApp, AppName: "local", Version: "1.2.3",
		DriverHostPort: "driver-host:7077", DriverLogURLs: map[string]string{"stdout": "http://nm/driver/stdout"}})
	store.OnEvent(endpoints.ExecutorAdded{Time: t0, ExecutorID: "driver", Host: "driver-host",
		Address: actor.RpcAddress{Host: "driver-host", Port: 7077}, Cores: 4})
	url := serve(t, webui.NewApplicationUI(store)).URL
	var execs []executorJSON
	getJSON(t, url+"/api/v1/applications/"+storeApp+"/executors", &execs)
	if len(execs) != 1 || execs[0].ID != "driver" || execs[0].TotalCores != 4 || execs[0].ExecutorLogs["stdout"] != "http://nm/driver/stdout" {
		t.Fatalf("executors = %+v, want the driver's row alone, with 4 cores and its logs", execs)
	}
	// The summaries count it as the executor it is.
	for page, want := range map[string]string{
		"/executors/": `<span id="executors-active">1</span>`,
		"/jobs/":      `<span id="active-executors">1</span> (4 cores)`,
	} {
		resp, err := http.Get(url + page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("%s lacks %q", page, want)
		}
	}
}
