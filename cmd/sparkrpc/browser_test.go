package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// envScreenshots names a folder where TestBrowserSeesTheUIs saves its
// screenshots (the README's are made with SPARKRPC_SCREENSHOTS=docs).
const envScreenshots = "SPARKRPC_SCREENSHOTS"

// chromiumPath returns the headless browser to drive, or "" when none is
// installed.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newBrowser starts headless Chromium with a fresh profile, cut off from
// every network service it would call by itself; the test's cleanup
// closes it.
func newBrowser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium): the browser test needs a real browser")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		// Its own temporary folder: Chromium leaves its singleton's
		// socket folder there when it is closed.
		chromedp.Env("TMPDIR=" + shortTempDir(t)),
		chromedp.WindowSize(1400, 820),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	return bctx
}

// shortTempDir returns a new temporary folder that the test's cleanup
// removes, with a path short enough for Chromium's singleton socket in it
// (a Unix socket's path is at most 107 bytes): t.TempDir's carries the
// test's name.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing Chromium's temporary folder: %v", err)
		}
	})
	return dir
}

// inBrowser runs a in the browser, failing the test on an error.
func inBrowser[T any](t *testing.T, browser context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(browser, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// saveScreenshot checks that png is a PNG image and writes it to the
// folder named by SPARKRPC_SCREENSHOTS, if set.
func saveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
		t.Fatalf("screenshot %s is not a PNG image (%d bytes)", name, len(png))
	}
	if dir := os.Getenv(envScreenshots); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("saved %s", filepath.Join(dir, name))
	}
}

// A person opens the resource manager's UI during a running job, sees the
// application's row with its tracking link, follows it to the driver's UI,
// and sees the executors listed and the completed task count moving as
// the page refreshes itself.
func TestBrowserSeesTheUIs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := newBrowser(t, ctx)

	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"}, []string{"--memory", "2g", "--cores", "2"})
	rmUI := uiURL(t, c.rm, "ResourceManager")
	submit := start(t, marker, "submit", "--master", "rm://"+c.addr, "--deploy-mode", "cluster", "--name", "SparkPi in a browser",
		"--num-executors", "2", "--executor-memory", "512m", "--driver-memory", "512m",
		"--conf", "spark.ui.port=0", "--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "2000")
	var app, tracking string
	testutil.Eventually(t, time.Minute, "the application to run, with its tracking URL", func() bool {
		out := submit.stderr.String()
		m, tm := appIDRe.FindStringSubmatch(out), trackingRe.FindStringSubmatch(out)
		if m != nil && tm != nil {
			app, tracking = m[1], tm[1]
		}
		return app != ""
	})

	// The resource manager's applications page.
	row := `tr.app[data-app="` + app + `"]`
	if err := chromedp.Do(browser, chromedp.Navigate(rmUI+"/cluster/apps"), chromedp.WaitVisible(row+` a.tracking`)); err != nil {
		t.Fatalf("resource manager UI: %v", err)
	}
	// Hold the page still (its own refresh replaces the rows) to read and click it.
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	rowText := inBrowser(t, browser, chromedp.Text(row))
	href := inBrowser(t, browser, chromedp.AttributeValue(row+` a.tracking`, "href")).Value
	rmShot := inBrowser(t, browser, chromedp.FullScreenshot(100))
	for _, want := range []string{app, "SparkPi in a browser", "RUNNING", "UNDEFINED", "ApplicationMaster"} {
		if !strings.Contains(rowText, want) {
			t.Fatalf("the application's row %q lacks %q", rowText, want)
		}
	}
	if href != tracking {
		t.Fatalf("tracking link %q, want the URL submit printed, %q", href, tracking)
	}
	saveScreenshot(t, "resourcemanager-ui.png", rmShot)

	// Follow the tracking link to the driver's UI, then its executors page.
	if err := chromedp.Do(browser, chromedp.Click(row+` a.tracking`, chromedp.NodeVisible), chromedp.WaitVisible(`tr.job`)); err != nil {
		t.Fatalf("following the tracking link: %v", err)
	}
	jobsText := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
	if !strings.Contains(jobsText, "Active Jobs (1)") || !strings.Contains(jobsText, "sparkpi") && !strings.Contains(jobsText, "SparkPi") {
		t.Fatalf("the driver's jobs page:\n%s", jobsText)
	}
	if err := chromedp.Do(browser, chromedp.Navigate(tracking+"/executors/"), chromedp.WaitVisible(`tr.executor`)); err != nil {
		t.Fatalf("driver UI: %v", err)
	}
	executors := inBrowser(t, browser, chromedp.Evaluate[int](`document.querySelectorAll('tr.executor').length`))
	// The page refreshes itself: read it in one step of its own script.
	const completedJS = `document.getElementById('executors-completed').textContent`
	first := inBrowser(t, browser, chromedp.Evaluate[string](completedJS))
	if executors != 2 {
		t.Fatalf("%d executors listed, want 2", executors)
	}
	n0, err := strconv.Atoi(first)
	if err != nil {
		t.Fatalf("completed tasks %q: %v", first, err)
	}
	// No reload: the page refreshes itself every 2s.
	var later string
	testutil.Eventually(t, 30*time.Second, "the completed task count to move on the open page", func() bool {
		later = inBrowser(t, browser, chromedp.Evaluate[string](completedJS))
		n, err := strconv.Atoi(later)
		return err == nil && n > n0
	})
	rowsText := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('table.executors').innerText`))
	driverShot := inBrowser(t, browser, chromedp.FullScreenshot(100))
	if got := regexp.MustCompile(`Active`).FindAllString(rowsText, -1); len(got) < 2 {
		t.Fatalf("executors table without two active executors:\n%s", rowsText)
	}
	saveScreenshot(t, "driver-ui-executors.png", driverShot)
	t.Logf("completed tasks moved from %d to %s while the page was open", n0, later)
	seeTheApplicationPages(t, browser, tracking)
	seeTheFlowAndTheLogs(t, browser, tracking)

	if err := submit.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	submit.wait(t, time.Minute)
	c.stop(t)
}

// seeTheApplicationPages checks, on the driver's UI at base, the driver's
// row, the jobs page's event timeline, a job's page with its task table
// and timeline, and the environment page; it saves screenshots of the
// jobs page and the job page.
func seeTheApplicationPages(t *testing.T, browser context.Context, base string) {
	t.Helper()
	driverRow := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('tr.driver[data-executor="driver"]').innerText`))
	if !strings.Contains(driverRow, "driver") || !strings.Contains(driverRow, ":") || !strings.Contains(driverRow, "Active") {
		t.Fatalf("the executors page's driver row: %q", driverRow)
	}
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/jobs/"), chromedp.WaitVisible(`svg#app-timeline rect.RUNNING`),
		chromedp.WaitVisible(`tr.job a`)); err != nil {
		t.Fatalf("the jobs page's timeline: %v", err)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	duration := inBrowser(t, browser, chromedp.Text(`tr.job td.duration`))
	if !regexp.MustCompile(`^\d+(\.\d)? (ms|s|min)$`).MatchString(duration) {
		t.Fatalf("a running job's duration reads %q, want the elapsed time", duration)
	}
	saveScreenshot(t, "driver-ui-jobs.png", inBrowser(t, browser, chromedp.FullScreenshot(100)))

	if err := chromedp.Do(browser, chromedp.Click(`tr.job a`, chromedp.NodeVisible), chromedp.WaitVisible(`table#task-table tr.task`),
		chromedp.WaitVisible(`svg#job-timeline rect`)); err != nil {
		t.Fatalf("a job's page: %v", err)
	}
	// A short page, sorted by duration, makes a small screenshot.
	jobURL := inBrowser(t, browser, chromedp.Evaluate[string](`location.href`))
	if err := chromedp.Do(browser, chromedp.Navigate(jobURL+"&task.sort=Duration&task.desc=true&task.pageSize=15"),
		chromedp.WaitVisible(`table#task-table tr.task`)); err != nil {
		t.Fatalf("a job's page, sorted: %v", err)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	table := inBrowser(t, browser, chromedp.Evaluate[string](`document.getElementById('task-table').innerText`))
	rows := inBrowser(t, browser, chromedp.Evaluate[int](`document.querySelectorAll('#task-table tr.task').length`))
	for _, want := range []string{"Index", "Task ID", "Executor ID", "Host", "Status", "Launch Time", "Duration", "Run Time", "Result Size", "SUCCESS"} {
		if !strings.Contains(table, want) {
			t.Fatalf("the task table lacks %q:\n%s", want, table)
		}
	}
	if rows != 15 {
		t.Fatalf("%d task rows, want a page of 15", rows)
	}
	saveScreenshot(t, "driver-ui-job.png", inBrowser(t, browser, chromedp.FullScreenshot(100)))

	if err := chromedp.Do(browser, chromedp.Navigate(base+"/environment/"), chromedp.WaitVisible(`tr.property`)); err != nil {
		t.Fatalf("the environment page: %v", err)
	}
	env := inBrowser(t, browser, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
	for _, want := range []string{"Runtime Information", "Go Version", "Platform", "Spark Properties"} {
		if !strings.Contains(env, want) {
			t.Fatalf("the environment page lacks %q:\n%s", want, env)
		}
	}
}

// seeTheFlowAndTheLogs checks, on the running driver's UI at base, the
// message-flow page (the driver's endpoints and its two executors' envs,
// drawn), and follows an executor's stderr link to its text on the node
// manager's UI; it saves a screenshot of the flow page.
func seeTheFlowAndTheLogs(t *testing.T, browser context.Context, base string) {
	t.Helper()
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/flow/"), chromedp.WaitVisible(`svg#flow g.node`)); err != nil {
		t.Fatalf("the flow page: %v", err)
	}
	testutil.Eventually(t, 30*time.Second, "the flow page to draw the driver's endpoints and both executors' envs", func() bool {
		svg := inBrowser(t, browser, chromedp.Evaluate[string](`document.getElementById('flow').textContent`))
		peers := inBrowser(t, browser, chromedp.Evaluate[int](`document.querySelectorAll('svg#flow g.node.peer').length`))
		// The executors' envs are named by their executors, and once a
		// rate window has passed, the edges carry rates.
		return strings.Contains(svg, "CoarseGrainedScheduler") && peers >= 2 && strings.Contains(svg, "executor 1") &&
			strings.Contains(svg, "executor 2") && strings.Contains(svg, "/s")
	})
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('live').checked = false`))
	saveScreenshot(t, "driver-ui-flow.png", inBrowser(t, browser, chromedp.FullScreenshot(100)))

	link := `tr.executor a.log[data-log="stderr"]`
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/executors/"), chromedp.WaitVisible(link)); err != nil {
		t.Fatalf("the executors page's log links: %v", err)
	}
	if err := chromedp.Do(browser, chromedp.Click(link, chromedp.NodeVisible), chromedp.WaitReady(`body`)); err != nil {
		t.Fatalf("following an executor's stderr link: %v", err)
	}
	where := inBrowser(t, browser, chromedp.Evaluate[string](`location.href`))
	text := inBrowser(t, browser, chromedp.Evaluate[string](`document.body.innerText`))
	if !strings.Contains(where, "/node/containerlogs/") || !strings.Contains(strings.ToLower(text), "executor") {
		t.Fatalf("an executor's stderr link led to %s:\n%.2000s", where, text)
	}
}

// authAnswerer answers the browser's HTTP authentication challenges as a
// person at its credentials prompt does: Cancel until provide is called,
// then the credentials given.
type authAnswerer struct {
	mu             sync.Mutex
	user, password string
	answer         fetch.AuthChallengeResponseResponse
	seen           []fetch.AuthChallenge
}

// answerAuth makes the browser pass every HTTP authentication challenge
// to a new authAnswerer; the test's cleanup stops the answering.
func answerAuth(t *testing.T, browser context.Context) *authAnswerer {
	t.Helper()
	a := &authAnswerer{answer: fetch.AuthChallengeResponseResponseCancelAuth}
	ctx, stop := context.WithCancel(browser)
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	challenged := chromedp.Events(ctx, fetch.AuthRequired)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ev, err := range paused {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range challenged {
			if err != nil {
				return
			}
			a.mu.Lock()
			if ev.AuthChallenge != nil {
				a.seen = append(a.seen, *ev.AuthChallenge)
			}
			resp := &fetch.AuthChallengeResponse{Response: a.answer}
			if a.answer == fetch.AuthChallengeResponseResponseProvideCredentials {
				resp.Username, resp.Password = a.user, a.password
			}
			a.mu.Unlock()
			_, _ = chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: resp})
		}
	}()
	t.Cleanup(func() {
		stop()
		wg.Wait()
	})
	handle := true
	if _, err := chromedp.Call(browser, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle}); err != nil {
		t.Fatalf("Fetch.enable: %v", err)
	}
	return a
}

// provide makes the answerer give user and password from now on.
func (a *authAnswerer) provide(user, password string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.user, a.password, a.answer = user, password, fetch.AuthChallengeResponseResponseProvideCredentials
}

// challenges returns the challenges seen so far and forgets them.
func (a *authAnswerer) challenges() []fetch.AuthChallenge {
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := a.seen
	a.seen = nil
	return seen
}

// With spark.authenticate on, a person's browser gets the 401 page from
// each UI (the resource manager's, a node manager's, the driver's) until
// it gives credentials; asked for them by the UI's Basic challenge, it
// gives a user name and the secret as the password, and sees the pages,
// its user name in their header, the pages refreshing themselves, and the
// driver's environment with the secret hidden. The driver runs in its
// application master (cluster mode): it holds only its application's
// generated secret, and its UI takes the cluster's, which the person has.
func TestBrowserSeesTheUIsWithAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	browser := newBrowser(t, ctx)

	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	secret := hex.EncodeToString(raw)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := netty.WriteSecretFile(secretFile, []byte(secret)); err != nil {
		t.Fatal(err)
	}
	auth := []string{"--conf", "spark.authenticate=true", "--conf", "spark.authenticate.secret.file=" + secretFile}
	marker := newMarker(t)
	c := startRMCluster(t, marker, auth, append([]string{"--memory", "2g", "--cores", "2"}, auth...))
	rmUI, nmUI := uiURL(t, c.rm, "ResourceManager"), uiURL(t, c.nms[0], "NodeManager")
	submit := start(t, marker, append(append([]string{"submit", "--master", "rm://" + c.addr, "--deploy-mode", "cluster",
		"--name", "SparkPi behind a password", "--driver-memory", "512m", "--executor-memory", "512m", "--num-executors", "1",
		"--conf", "spark.ui.port=0", "--conf", "spark.yarn.report.interval=100ms", "--conf", "spark.examples.sparkPi.taskDelay=100ms"},
		auth...), "--class", "SparkPi", "spark-internal", "2000")...)
	var driverUI, appID string
	appRe := regexp.MustCompile(`Submitted application (\S+)`)
	testutil.Eventually(t, time.Minute, "the driver's tracking URL", func() bool {
		if m := trackingRe.FindStringSubmatch(submit.stderr.String()); m != nil {
			driverUI = m[1]
		}
		if m := appRe.FindStringSubmatch(submit.stderr.String()); m != nil {
			appID = m[1]
		}
		return driverUI != "" && appID != ""
	})
	pages := []struct{ url, ready string }{
		{rmUI + "/cluster/nodes", `tr.node`},
		{nmUI + "/", `main#content`},
		{driverUI + "/environment/", `tr.property[data-key="spark.sparkrpc.ui.secretVerifier"]`},
	}

	// Without credentials (the person cancels the browser's prompt): the
	// 401 page, on every UI.
	prompt := answerAuth(t, browser)
	const statusJS = `performance.getEntriesByType('navigation')[0].responseStatus`
	for _, p := range pages {
		if err := doWithin(browser, 30*time.Second, chromedp.Navigate(p.url), chromedp.WaitVisible(`#unauthorized`)); err != nil {
			t.Fatalf("%s without credentials: %v", p.url, err)
		}
		if status := inBrowser(t, browser, chromedp.Evaluate[int](statusJS)); status != 401 {
			t.Fatalf("%s without credentials: status %d, want 401", p.url, status)
		}
	}

	checkChallenges(t, prompt.challenges(), len(pages))

	// With them, as a person types them in the browser's prompt.
	prompt.provide("alice", secret)
	for _, p := range pages {
		if err := doWithin(browser, 30*time.Second, chromedp.Navigate(p.url), chromedp.WaitVisible(p.ready)); err != nil {
			t.Fatalf("%s with credentials: %v", p.url, err)
		}
		if status := inBrowser(t, browser, chromedp.Evaluate[int](statusJS)); status != 200 {
			t.Fatalf("%s with credentials: status %d, want 200", p.url, status)
		}
		if user := inBrowser(t, browser, chromedp.Text(`#user`)); user != "alice" {
			t.Fatalf("%s: the header names user %q, want alice", p.url, user)
		}
	}
	checkChallenges(t, prompt.challenges(), len(pages))
	// The environment page hides the secret's file and never shows the
	// secret; the page's own refresh gets through with the credentials the
	// browser keeps.
	envText := inBrowser(t, browser, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if strings.Contains(envText, secret) || strings.Contains(envText, secretFile) || strings.Contains(envText, "pbkdf2") ||
		!strings.Contains(envText, "*********(redacted)") {
		t.Fatalf("the environment page shows the secret, its file or its verifier, or redacts nothing:\n%s", envText)
	}
	inBrowser(t, browser, chromedp.Evaluate[bool](`document.getElementById('content').innerHTML = ''; true`))
	if err := doWithin(browser, 30*time.Second, chromedp.WaitVisible(pages[2].ready)); err != nil {
		t.Fatalf("the environment page did not refresh itself: %v", err)
	}
	shot := inBrowser(t, browser, chromedp.FullScreenshot(100))
	saveScreenshot(t, "driver-ui-environment-auth.png", shot)

	if out, stderr, code := runBin(t, marker, time.Minute, append([]string{"submit", "--master", "rm://" + c.addr, "--kill", appID}, auth...)...); code != 0 {
		t.Fatalf("kill: exit %d\n%s%s", code, out, stderr)
	}
	submit.wait(t, time.Minute)
	c.stop(t)
}

// doWithin runs steps in the browser, which has run already, giving up
// after d.
func doWithin(browser context.Context, d time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(browser, d)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// checkChallenges checks that the browser was challenged at least n times,
// each time for Basic credentials in realm sparkrpc.
func checkChallenges(t *testing.T, seen []fetch.AuthChallenge, n int) {
	t.Helper()
	if len(seen) < n {
		t.Fatalf("%d authentication challenges, want at least %d: %+v", len(seen), n, seen)
	}
	for _, ch := range seen {
		if !strings.EqualFold(ch.Scheme, "basic") || ch.Realm != "sparkrpc" {
			t.Fatalf("challenge %+v, want Basic in realm sparkrpc", ch)
		}
	}
}
