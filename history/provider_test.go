package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
)

// failTask fails every task it runs.
const failTask = "history.test.fail"

func init() {
	endpoints.RegisterTask(failTask, func(context.Context, endpoints.TaskContext, []byte) ([]byte, error) {
		return nil, errors.New("this task always fails")
	})
}

// jobFigures and executorFigures are what the test compares of the REST
// API's jobs and executors: every figure a log carries.
type jobFigures struct {
	JobID               int64  `json:"jobId"`
	Name                string `json:"name"`
	Status              string `json:"status"`
	NumTasks            int    `json:"numTasks"`
	NumActiveTasks      int    `json:"numActiveTasks"`
	NumCompletedTasks   int    `json:"numCompletedTasks"`
	NumFailedTasks      int    `json:"numFailedTasks"`
	NumKilledTasks      int    `json:"numKilledTasks"`
	NumCompletedIndices int    `json:"numCompletedIndices"`
	FailureReason       string `json:"failureReason"`
}

type executorFigures struct {
	ID             string `json:"id"`
	HostPort       string `json:"hostPort"`
	TotalCores     int    `json:"totalCores"`
	FailedTasks    int    `json:"failedTasks"`
	CompletedTasks int    `json:"completedTasks"`
	TotalTasks     int    `json:"totalTasks"`
}

// A real driver with two executors runs a job that succeeds and one that
// fails, its UI live and its event log on; then the history server shows
// the same jobs and executors, figure for figure, from the log.
func TestHistoryShowsWhatTheLiveUIShowed(t *testing.T) {
	dir := t.TempDir()
	const app = "app-20261206000000-0001"
	w := eventlog.NewWriter(eventlog.Config{Dir: dir, Compress: true})
	d, stop := startDriver(t, w)
	live := httptest.NewServer(webui.NewDriverUI(d, webui.AppInfo{ID: app, Name: "history test", User: "ann"}))
	defer live.Close()
	start := time.Now()
	d.PostEvent(endpoints.ApplicationStart{Time: start, AppID: app, AppName: "history test", User: "ann",
		DriverHostPort: d.Env().Address().HostPort()})
	env, err := webui.NewEnvironmentUpdate(d.Env().Conf(), "", "test", start)
	if err != nil {
		t.Fatal(err)
	}
	d.PostEvent(env)
	if err := w.Start(app, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := d.RunJob(ctx, endpoints.NoopTaskName, make([][]byte, 40)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RunJob(ctx, failTask, make([][]byte, 3)); err == nil {
		t.Fatal("the failing job succeeded")
	}
	// What the live UI shows once both jobs have ended (its store is fed
	// by the bus: wait until it has both).
	var liveJobs []jobFigures
	testutil.Eventually(t, 10*time.Second, "the live UI to show both jobs ended", func() bool {
		getJSON(t, live.URL+"/api/v1/applications/"+app+"/jobs", &liveJobs)
		// A failed job ends before the ends of its attempts still
		// running: wait for those too.
		return len(liveJobs) == 2 && liveJobs[0].Status != "RUNNING" && liveJobs[1].Status != "RUNNING" &&
			liveJobs[0].NumActiveTasks == 0 && liveJobs[1].NumActiveTasks == 0
	})
	var liveExecs []executorFigures
	getJSON(t, live.URL+"/api/v1/applications/"+app+"/allexecutors", &liveExecs)
	for _, e := range liveExecs {
		if e.TotalTasks != e.CompletedTasks+e.FailedTasks {
			t.Fatalf("executor %s still runs tasks once both jobs ended: %+v", e.ID, e)
		}
	}
	d.PostEvent(endpoints.ApplicationEnd{Time: time.Now()})
	stop()
	closeLog(t, w)

	_, hs := historyServer(t, dir)
	var apps []webui.ApplicationInfo
	getJSON(t, hs.URL+"/api/v1/applications?status=completed", &apps)
	if len(apps) != 1 || apps[0].ID != app || apps[0].Name != "history test" || !apps[0].Attempts[0].Completed ||
		apps[0].Attempts[0].SparkUser != "ann" {
		t.Fatalf("completed applications = %+v", apps)
	}
	getJSON(t, hs.URL+"/api/v1/applications?status=running", &apps)
	if len(apps) != 0 {
		t.Fatalf("running applications = %+v, want none", apps)
	}
	var histJobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/"+app+"/jobs", &histJobs)
	if fmt.Sprint(histJobs) != fmt.Sprint(liveJobs) {
		t.Fatalf("jobs:\nlive    %+v\nhistory %+v", liveJobs, histJobs)
	}
	var histExecs []executorFigures
	getJSON(t, hs.URL+"/api/v1/applications/"+app+"/allexecutors", &histExecs)
	// The list puts active executors first, and stopping the cluster after
	// the live UI was read may log the removal of one executor and not of
	// the other: compare them in the order of their ids.
	byID := func(a, b executorFigures) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(liveExecs, byID)
	slices.SortFunc(histExecs, byID)
	if fmt.Sprint(histExecs) != fmt.Sprint(liveExecs) {
		t.Fatalf("executors:\nlive    %+v\nhistory %+v", liveExecs, histExecs)
	}
	if liveJobs[0].NumCompletedTasks+liveJobs[1].NumCompletedTasks != 40 || liveJobs[0].NumFailedTasks+liveJobs[1].NumFailedTasks == 0 {
		t.Fatalf("the jobs' figures are not those of the jobs run: %+v", liveJobs)
	}
	// The pages, under the application's path.
	for _, page := range []string{"/jobs/", "/jobs/job/?id=1", "/executors/", "/environment/"} {
		code, body := get(t, hs.URL+"/history/"+app+page)
		if code != 200 || !strings.Contains(body, app) {
			t.Fatalf("GET /history/%s%s = %d:\n%s", app, page, code, body)
		}
		if strings.Contains(body, `href="/jobs/`) || strings.Contains(body, `href="/executors/`) {
			t.Fatalf("%s links outside the application's path:\n%s", page, body)
		}
	}
	failed := histJobs[0].JobID // newest first
	if code, body := get(t, hs.URL+fmt.Sprintf("/history/%s/jobs/job/?id=%d", app, failed)); code != 200 || !strings.Contains(body, "this task always fails") {
		t.Fatalf("the failed job's page = %d, without its tasks' error:\n%s", code, body)
	}
	t.Logf("jobs %+v; executors %+v", histJobs, histExecs)
}

// startDriver starts a driver with two executors of two cores over
// loopback TCP, l among its listeners; stop stops them (the test's
// cleanup too).
func startDriver(t *testing.T, l endpoints.Listener) (d *endpoints.Driver, stop func()) {
	t.Helper()
	log := zerolog.Nop()
	conf := actor.NewConf().Set(endpoints.KeyHeartbeatInterval, "100ms")
	env, err := netty.NewEnv("sparkDriver", conf, netty.WithBindHost("127.0.0.1"), netty.WithPort(0), netty.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{Executors: 2, Cores: 2,
		DriverOptions: []endpoints.DriverOption{endpoints.WithListener(l)},
		NewEnv: func(name string, conf *actor.Conf) (*actor.Env, error) {
			return netty.NewEnv(name, conf, netty.WithClientMode(), netty.WithLogger(log))
		}})
	if err != nil {
		_ = env.Shutdown(context.Background())
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.Stop(ctx); err != nil {
				t.Logf("stopping the cluster: %v", err)
			}
			_ = env.Shutdown(ctx)
		})
	}
	t.Cleanup(stop)
	return c.Driver, stop
}

// An application that failed shows its error in the list and on its pages.
func TestFailedApplicationShowsItsError(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-failed", true,
		endpoints.ApplicationStart{Time: now, AppID: "app-failed", AppName: "doomed", User: "bob"},
		endpoints.JobStart{Time: now, JobID: 1, TaskName: "t", NumTasks: 1},
		endpoints.TaskStart{Time: now, JobID: 1, TaskID: 0, ExecutorID: "1"},
		endpoints.TaskEnd{Time: now.Add(time.Second), JobID: 1, TaskID: 0, ExecutorID: "1",
			State: messages.TaskState_TASK_STATE_FAILED, Error: "disk on fire", Duration: time.Second},
		endpoints.JobEnd{Time: now.Add(time.Second), JobID: 1, Err: errors.New("job aborted: disk on fire")},
		endpoints.ApplicationEnd{Time: now.Add(2 * time.Second), Error: "the application gave up: disk on fire"})
	_, hs := historyServer(t, dir)
	code, body := get(t, hs.URL+"/")
	if code != 200 || !strings.Contains(body, "app-failed") || !strings.Contains(body, "FAILED") ||
		!strings.Contains(body, "the application gave up: disk on fire") {
		t.Fatalf("list = %d:\n%s", code, body)
	}
	code, body = get(t, hs.URL+"/history/app-failed/jobs/")
	if code != 200 || !strings.Contains(body, "the application gave up: disk on fire") || !strings.Contains(body, "job aborted: disk on fire") {
		t.Fatalf("jobs page = %d:\n%s", code, body)
	}
}

// A log cut short, with a line that does not decode, is shown as far as it
// can be read, and its pages say what could not be read.
func TestDamagedLogShowsWhatItCanAndSaysWhatItCouldNot(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-damaged", true,
		endpoints.ApplicationStart{Time: now, AppID: "app-damaged", AppName: "damaged"},
		endpoints.JobStart{Time: now, JobID: 1, TaskName: "t", NumTasks: 1})
	logs, err := eventlog.List(dir)
	if err != nil || len(logs) != 1 {
		t.Fatalf("List = %v, %v", logs, err)
	}
	f, err := os.OpenFile(logs[0].Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":1,\"Completion Time\":%d,\"Job Result\":{\"Result\":\"JobSucceeded\"}}\n", now.UnixMilli())
	fmt.Fprintf(f, "{this is not json}\n{\"Event\":\"SparkListenerApplicationEnd\",\"Times")
	f.Close()
	_, hs := historyServer(t, dir)
	code, body := get(t, hs.URL+"/history/app-damaged/jobs/")
	if code != 200 || !strings.Contains(body, "Not all of this application") || !strings.Contains(body, `class="job"`) {
		t.Fatalf("jobs page of a damaged log = %d:\n%s", code, body)
	}
	if !strings.Contains(body, filepath.Base(logs[0].Path)) {
		t.Fatalf("the page does not say which lines could not be read:\n%s", body)
	}
}

// A log still being written is listed as incomplete, and what it gains is
// shown once the folder is read again; once it ends it is listed as
// completed.
func TestRunningApplicationIsFollowed(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	w := writeLog(t, dir, "app-running", false,
		endpoints.ApplicationStart{Time: now, AppID: "app-running", AppName: "running"},
		endpoints.JobStart{Time: now, JobID: 1, TaskName: "t", NumTasks: 2})
	p, hs := historyServer(t, dir)
	var apps []webui.ApplicationInfo
	testutil.Eventually(t, 10*time.Second, "the running application to be listed", func() bool {
		if err := p.Refresh(); err != nil {
			t.Fatal(err)
		}
		getJSON(t, hs.URL+"/api/v1/applications?status=running", &apps)
		return len(apps) == 1
	})
	if got := apps[0].Attempts[0]; got.EndTime != "1969-12-31T23:59:59.999GMT" || got.EndTimeEpoch != -1 || got.Completed {
		t.Fatalf("a running application's attempt = %+v, want Spark's end before the epoch", got)
	}
	if code, body := get(t, hs.URL+"/?showIncomplete=true"); code != 200 || !strings.Contains(body, "app-running") {
		t.Fatalf("incomplete list = %d:\n%s", code, body)
	}
	// The writer writes on its own goroutine: the job is there once the
	// folder has been read again after it wrote it.
	var jobs []jobFigures
	testutil.Eventually(t, 10*time.Second, "the running job to be shown", func() bool {
		if err := p.Refresh(); err != nil {
			t.Fatal(err)
		}
		code, body := get(t, hs.URL+"/api/v1/applications/app-running/jobs")
		return code == 200 && json.Unmarshal([]byte(body), &jobs) == nil && len(jobs) == 1
	})
	if jobs[0].Status != "RUNNING" {
		t.Fatalf("jobs while running = %+v", jobs)
	}
	w.OnEvent(endpoints.JobEnd{Time: now, JobID: 1})
	w.OnEvent(endpoints.ApplicationEnd{Time: now})
	closeLog(t, w)
	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	getJSON(t, hs.URL+"/api/v1/applications?status=completed", &apps)
	if len(apps) != 1 || apps[0].ID != "app-running" {
		t.Fatalf("completed after the end = %+v", apps)
	}
	getJSON(t, hs.URL+"/api/v1/applications/app-running/jobs", &jobs)
	if len(jobs) != 1 || jobs[0].Status != "SUCCEEDED" {
		t.Fatalf("jobs after the end = %+v", jobs)
	}
}

// An unknown application is a 404, on its pages and in the API.
func TestUnknownApplication(t *testing.T) {
	_, hs := historyServer(t, t.TempDir())
	for _, path := range []string{"/history/nope/jobs/", "/api/v1/applications/nope/jobs"} {
		if code, body := get(t, hs.URL+path); code != 404 || !strings.Contains(body, "nope") {
			t.Fatalf("GET %s = %d %q", path, code, body)
		}
	}
	if code, _ := get(t, hs.URL+"/api/v1/applications?status=sleeping"); code != 400 {
		t.Fatalf("?status=sleeping = %d, want 400", code)
	}
}

// With a secret, every page and API route of the history server requires
// it, the applications' own pages too.
func TestHistoryServerRequiresTheSecret(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, "app-secret", true, endpoints.ApplicationStart{Time: time.Now(), AppID: "app-secret", AppName: "s"},
		endpoints.ApplicationEnd{Time: time.Now()})
	p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	hs := httptest.NewServer(webui.NewHistoryServerUI(p, webui.WithSecret("s3cret")))
	defer hs.Close()
	for _, path := range []string{"/", "/history/app-secret/jobs/", "/api/v1/applications", "/api/v1/applications/app-secret/jobs"} {
		if code, _ := get(t, hs.URL+path); code != 401 {
			t.Fatalf("GET %s without the secret = %d, want 401", path, code)
		}
		req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s with the secret = %d, want 200", path, resp.StatusCode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// A driver whose spark.redaction.regex was narrower than the history
// server's wrote a sensitive value as it was: the history server redacts
// it again with its own regex, on the page and in the API.
func TestHistoryServerRedactsAgain(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-leaky", true, endpoints.ApplicationStart{Time: now, AppID: "app-leaky", AppName: "leaky"},
		endpoints.EnvironmentUpdate{Time: now, Properties: [][2]string{{"spark.app.name", "leaky"}, {"spark.db.password", "hunter2"}}},
		endpoints.ApplicationEnd{Time: now})
	_, hs := historyServer(t, dir)
	for _, path := range []string{"/history/app-leaky/environment/", "/api/v1/applications/app-leaky/environment"} {
		code, body := get(t, hs.URL+path)
		if code != 200 || strings.Contains(body, "hunter2") || !strings.Contains(body, "spark.db.password") || !strings.Contains(body, "leaky") {
			t.Fatalf("GET %s = %d:\n%s", path, code, body)
		}
	}
}
