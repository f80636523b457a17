package main

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A SparkPi run on a resource manager with its event log on, then the
// history server: the resource manager's tracking URL of the finished
// application opens its history page, where a headless Chromium sees its
// jobs, tasks, executors, timeline and environment; an application that
// failed shows its error in the list.
func TestHistoryServerAfterTheJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	browser := newBrowser(t, ctx)
	marker := newMarker(t)
	events := t.TempDir()
	hs := start(t, marker, "history-server", "--dir", events, "--port", "0", "--conf", "spark.history.fs.update.interval=1s")
	hsURL := uiURL(t, hs, "HistoryServer")
	u, err := url.Parse(hsURL)
	if err != nil {
		t.Fatal(err)
	}
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"}, []string{"--memory", "2g", "--cores", "2"})
	rmUI := uiURL(t, c.rm, "ResourceManager")
	logConf := []string{"--conf", "spark.eventLog.enabled=true", "--conf", "spark.eventLog.dir=" + events,
		"--conf", "spark.eventLog.compress=false"}
	args := append([]string{"submit", "--master", "rm://" + c.addr, "--deploy-mode", "cluster", "--name", "SparkPi in history",
		"--num-executors", "2", "--executor-memory", "512m", "--driver-memory", "512m", "--conf", "spark.ui.port=0",
		"--conf", "spark.yarn.historyServer.address=" + u.Host}, logConf...)
	_, stderr, code := runBin(t, marker, 2*time.Minute, append(args, "--class", "SparkPi", "spark-internal", "40")...)
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("submit: exit %d\n%s", code, stderr)
	}
	app := m[1]
	historyPage := hsURL + "/history/" + app + "/"

	// The resource manager's report and its page: the tracking URL is now
	// the history page.
	var report struct {
		TrackingURL string `json:"trackingUrl"`
	}
	if code, body := httpGet(t, rmUI+"/api/v1/applications/"+app); code != 200 || json.Unmarshal([]byte(body), &report) != nil ||
		report.TrackingURL != historyPage {
		t.Fatalf("the finished application's report = %d %s; want trackingUrl %s", code, body, historyPage)
	}
	row := `tr.app[data-app="` + app + `"]`
	if err := chromedp.Do(browser, chromedp.Navigate(rmUI+"/cluster/apps"), chromedp.WaitVisible(row+` a.tracking`)); err != nil {
		t.Fatalf("resource manager UI: %v", err)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	if label := inBrowser(t, browser, chromedp.Text(row+` a.tracking`)); label != "History" {
		t.Fatalf("the finished application's tracking link reads %q, want History", label)
	}
	// Followed by its address rather than clicked: the page renews its
	// rows, and a click on a row being replaced goes nowhere (a CI run
	// under load waited for the history page until its deadline).
	href := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('`+row+` a.tracking').href`))
	if href != historyPage {
		t.Fatalf("the finished application's tracking link goes to %q, want %s", href, historyPage)
	}
	// The history server reads a log at its next scan
	// (spark.history.fs.update.interval): the page is there once it has.
	testutil.Eventually(t, time.Minute, "the application's history page", func() bool {
		code, _ := httpGet(t, historyPage)
		return code == 200
	})
	if err := chromedp.Do(browser, chromedp.Navigate(href), chromedp.WaitVisible(`svg#app-timeline`),
		chromedp.WaitVisible(`tr.job a`)); err != nil {
		t.Fatalf("following the tracking link to the history page: %v", err)
	}
	jobs := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
	for _, want := range []string{"Completed Jobs (1)", "Active Jobs (0)", "SUCCEEDED", "Event Timeline"} {
		if !strings.Contains(jobs, want) {
			t.Fatalf("the history jobs page lacks %q:\n%s", want, jobs)
		}
	}
	historyAppPages(t, browser, hsURL, app)
	saveScreenshot(t, "history-server-job.png", inBrowser(t, browser, chromedp.FullScreenshot(100)))

	// An application that failed: its error, in the list.
	_, stderr, code = runBin(t, marker, time.Minute, append(append([]string{"submit", "--master", "local[2]", "--conf", "spark.ui.enabled=false"},
		logConf...), "--class", "ErrorApp", "spark-internal", "the", "answer", "was", "not", "42")...)
	if code == 0 {
		t.Fatalf("ErrorApp succeeded:\n%s", stderr)
	}
	var list string
	testutil.Eventually(t, 30*time.Second, "the failed application in the history server's list", func() bool {
		if err := chromedp.Do(browser, chromedp.Navigate(hsURL+"/"), chromedp.WaitVisible(`table.history`)); err != nil {
			t.Fatalf("the history server's list: %v", err)
		}
		list = inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('table.history').innerText`))
		return strings.Contains(list, "the answer was not 42")
	})
	if !strings.Contains(list, "FAILED") || !strings.Contains(list, app) || !strings.Contains(list, "SparkPi in history") {
		t.Fatalf("the history server's list:\n%s", list)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	saveScreenshot(t, "history-server.png", inBrowser(t, browser, chromedp.FullScreenshot(100)))
	// Both have ended: the list of incomplete applications is empty.
	if err := chromedp.Do(browser, chromedp.Click(`#show-incomplete`, chromedp.NodeVisible), chromedp.WaitVisible(`#show-complete`)); err != nil {
		t.Fatalf("the incomplete applications: %v", err)
	}
	if text := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('table.history').innerText`)); !strings.Contains(text, "No incomplete applications found.") {
		t.Fatalf("the incomplete applications:\n%s", text)
	}

	c.stop(t)
	if err := hs.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := hs.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("history-server exited %d on SIGTERM:\n%s", code, hs.stderr.String())
	}
}

// historyAppPages checks the history server's pages of finished SparkPi
// application app: a job's task table, the executors with the driver's
// row, and the environment; it ends on the job's page.
func historyAppPages(t *testing.T, browser context.Context, hsURL, app string) {
	t.Helper()
	base := hsURL + "/history/" + app
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/executors/"), chromedp.WaitVisible(`tr.executor`)); err != nil {
		t.Fatalf("the history executors page: %v", err)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	if n := inBrowser(t, browser, chromedp.Evaluate[int](`document.querySelectorAll('tr.executor').length`)); n != 2 {
		t.Fatalf("%d executors on the history executors page, want 2", n)
	}
	if driver := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('tr.driver').innerText`)); !strings.Contains(driver, "driver") {
		t.Fatalf("the driver's row: %q", driver)
	}
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/environment/"), chromedp.WaitVisible(`tr.property`)); err != nil {
		t.Fatalf("the history environment page: %v", err)
	}
	env := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
	for _, want := range []string{"Go Version", "spark.app.name", "SparkPi in history", "spark.eventLog.enabled"} {
		if !strings.Contains(env, want) {
			t.Fatalf("the history environment page lacks %q:\n%s", want, env)
		}
	}
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/jobs/job/?id=0&task.pageSize=15"), chromedp.WaitVisible(`table#task-table tr.task`),
		chromedp.WaitVisible(`svg#job-timeline rect`)); err != nil {
		t.Fatalf("the history job page: %v", err)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	table := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
	if !regexp.MustCompile(`SUCCESS`).MatchString(table) || !strings.Contains(table, "40") {
		t.Fatalf("the history job page:\n%s", table)
	}
}

// The history server serves /metrics, as every UI does: the Go runtime's
// and the count of the applications it lists.
func TestHistoryServerMetrics(t *testing.T) {
	marker := newMarker(t)
	hs := start(t, marker, "history-server", "--dir", t.TempDir(), "--port", "0")
	hsURL := uiURL(t, hs, "HistoryServer")
	code, body := httpGet(t, hsURL+"/metrics")
	if code != 200 || !strings.Contains(body, "\nsparkrpc_history_applications 0\n") || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET /metrics = %d\n%s", code, body)
	}
	hs.cmd.Process.Signal(syscall.SIGTERM)
	if code := hs.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, hs.stderr)
	}
}
