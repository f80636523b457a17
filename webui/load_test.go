package webui_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/webui"
)

// A page held between its snapshot and its write (a client slow to read,
// a stalled connection) holds nothing the scheduler needs: whole jobs run
// and end, executors register and heartbeat, while renders of every page
// are stuck, and the pages answer once released.
func TestStalledRendersDoNotBlockTheScheduler(t *testing.T) {
	c := startCluster(t, 2, 2)
	stall := make(chan struct{})
	var stalled atomic.Int32
	entered := make(chan struct{}, 16)
	hook := func() {
		stalled.Add(1)
		entered <- struct{}{}
		<-stall
	}
	base := newDriverUI(t, c, webui.WithBeforeSend(hook))
	pages := []string{"/jobs/", "/executors/", "/endpoints/"}
	var wg sync.WaitGroup
	codes := make([]int, len(pages))
	for i, p := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = get(t, base+p, "")
		}()
	}
	for range pages {
		<-entered
	}
	released := false
	defer func() {
		if !released {
			close(stall)
			wg.Wait()
		}
	}()
	// While three renders are stuck: jobs of many tasks run to the end.
	for range 3 {
		payloads := make([][]byte, 200)
		done := runJob(c.Driver, endpoints.NoopTaskName, payloads)
		if err := testutil.Recv(t, done, time.Minute, "a job while pages are stalled"); err != nil {
			t.Fatal(err)
		}
	}
	// The REST API, which has no hook, answers meanwhile too.
	// (The UI learns of the ends through the listener bus, a little later.)
	testutil.Eventually(t, testTimeout, "3 ended jobs in the API while pages are stalled", func() bool {
		var jobs []jobJSON
		getJSON(t, base+"/api/v1/applications/"+testApp+"/jobs", &jobs)
		return len(jobs) == 3 && jobs[0].Status == "SUCCEEDED" && jobs[0].NumCompletedTasks == 200
	})
	if n := stalled.Load(); n != int32(len(pages)) {
		t.Fatalf("%d renders entered the hook, want %d", n, len(pages))
	}
	close(stall)
	released = true
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusOK {
			t.Fatalf("%s = %d after release", pages[i], code)
		}
	}
}

// Under a steady stream of page views, a job of many tasks still completes
// and the pages end up showing every task.
func TestDriverUIUnderLoad(t *testing.T) {
	c := startCluster(t, 2, 2)
	base := newDriverUI(t, c)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var views atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, p := range []string{"/jobs/", "/executors/", "/endpoints/", "/api/v1/applications/" + testApp + "/executors"} {
					if code, body := get(t, base+p, ""); code != http.StatusOK {
						t.Errorf("%s = %d %s", p, code, body)
					}
					views.Add(1)
				}
			}
		}()
	}
	done := runJob(c.Driver, endpoints.NoopTaskName, make([][]byte, 2000))
	err := testutil.Recv(t, done, time.Minute, "the job under page load")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if views.Load() == 0 {
		t.Fatal("no page was viewed during the job")
	}
	testutil.Eventually(t, testTimeout, "2000 completed tasks on the executors API", func() bool {
		var execs []executorJSON
		getJSON(t, base+"/api/v1/applications/"+testApp+"/executors", &execs)
		n := 0
		for _, e := range execs {
			n += e.CompletedTasks
		}
		return n == 2000
	})
}
