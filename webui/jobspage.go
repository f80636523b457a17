package webui

// This file holds the jobs page (Spark's AllJobsPage, with its event
// timeline) and a job's page (Spark's JobPage and the stage page's task
// table: sparkrpc has one stage per job), sorted and paged on the server.

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Task table paging: Spark's task.pageSize default, and a bound.
const (
	defaultTaskPageSize = 100
	maxTaskPageSize     = 1000
)

// jobRow is a job as the jobs page lists it.
type jobRow struct {
	jobStatus
	Href     string
	Duration time.Duration // elapsed while it runs
}

// jobsView is the jobs page's data.
type jobsView struct {
	App                 AppInfo
	Uptime              time.Duration
	Active, Ended       []jobRow
	Executors, Cores    int
	TasksDone, TasksRun int
	Timeline            svgTimeline
}

func (u *appUI) jobRow(j jobStatus, now time.Time) jobRow {
	end := j.Ended
	if end.IsZero() {
		end = now
	}
	return jobRow{jobStatus: j, Href: u.href(fmt.Sprintf("/jobs/job/?id=%d", j.ID)), Duration: max(0, end.Sub(j.Submitted))}
}

func (u *appUI) jobsPage(w http.ResponseWriter, r *http.Request) {
	app := u.store.Info()
	now := u.now(app)
	v := jobsView{App: app, Uptime: now.Sub(app.Start).Round(time.Second)}
	jobs := u.store.jobsSnapshot()
	for _, j := range jobs {
		if j.Status == "RUNNING" {
			v.Active = append(v.Active, u.jobRow(j, now))
		} else {
			v.Ended = append(v.Ended, u.jobRow(j, now))
		}
		v.TasksDone += j.Completed
		v.TasksRun += j.Active
	}
	execs := u.store.executorsSnapshot(nil)
	for _, ex := range execs {
		if ex.IsActive() && ex.runsTasks() {
			v.Executors++
			v.Cores += ex.Cores
		}
	}
	v.Timeline = appTimeline(app, execs, jobs, now, u.o.base)
	render(w, r, "jobs", page{Title: "Spark Jobs", Heading: u.heading(), Nav: u.nav("/jobs/"), Notices: u.o.notices, Data: v}, u.o.beforeSend)
}

// taskColumn is a header of the task table: its link sorts by it.
type taskColumn struct {
	Name, Href string
	Sorted     bool
	Desc       bool
}

// pageLink is a link of the task table's pager.
type pageLink struct {
	Label, Href string
	Current     bool
}

// jobView is a job's page's data.
type jobView struct {
	Job                jobRow
	Tasks              []taskView
	Kept               int // the task attempts the job keeps
	Columns            []taskColumn
	Pages              []pageLink
	Page, PageCount    int
	PageSize           int
	First, Last        int // the 1-based positions of the page's first and last task
	Timeline           svgTimeline
	RetainedTasksLimit int
}

// taskParams reads Spark's task table parameters: task.sort, task.desc,
// task.page (from 1) and task.pageSize.
func taskParams(q url.Values) (sortCol string, desc bool, page, size int) {
	sortCol = q.Get("task.sort")
	if !contains(taskColumns, sortCol) {
		sortCol = colIndex
	}
	desc, _ = strconv.ParseBool(q.Get("task.desc"))
	page, err := strconv.Atoi(q.Get("task.page"))
	if err != nil || page < 1 {
		page = 1
	}
	// Past the end is the last page; bounded so that the page's offset,
	// (page-1) * size, cannot overflow.
	page = min(page, math.MaxInt32)
	size, err = strconv.Atoi(q.Get("task.pageSize"))
	if err != nil || size < 1 {
		size = defaultTaskPageSize
	}
	return sortCol, desc, page, min(size, maxTaskPageSize)
}

func (u *appUI) jobPage(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	j, ok := u.store.job(id)
	if err != nil || !ok {
		http.Error(w, "unknown job: "+r.URL.Query().Get("id"), http.StatusNotFound)
		return
	}
	now := u.now(u.store.Info())
	sortCol, desc, pg, size := taskParams(r.URL.Query())
	// A page past the end shows the last, sorted once.
	tasks, kept, _ := u.store.tasksPage(id, taskQuery{Sort: sortCol, Desc: desc, Offset: (pg - 1) * size, Length: size,
		Clamp: true}, now)
	pages := max(1, (kept+size-1)/size)
	pg = min(pg, pages)
	link := func(sortCol string, desc bool, pg int) string {
		q := url.Values{"id": {strconv.FormatInt(id, 10)}, "task.sort": {sortCol}, "task.desc": {strconv.FormatBool(desc)},
			"task.page": {strconv.Itoa(pg)}, "task.pageSize": {strconv.Itoa(size)}}
		return u.href("/jobs/job/?" + q.Encode())
	}
	v := jobView{Job: u.jobRow(j, now), Tasks: tasks, Kept: kept, Page: pg, PageCount: pages, PageSize: size,
		First: (pg-1)*size + 1, Last: (pg-1)*size + len(tasks), RetainedTasksLimit: u.store.retainedTasks}
	for _, c := range taskColumns {
		sorted := c == sortCol
		v.Columns = append(v.Columns, taskColumn{Name: c, Href: link(c, sorted && !desc, 1), Sorted: sorted, Desc: desc})
	}
	for _, p := range pagerPages(pg, pages) {
		v.Pages = append(v.Pages, pageLink{Label: strconv.Itoa(p), Href: link(sortCol, desc, p), Current: p == pg})
	}
	first, total := u.store.tasksForTimeline(id, maxTimelineTasks, now)
	v.Timeline = jobTimeline(j, first, total, now)
	title := fmt.Sprintf("Details for Job %d", j.ID)
	render(w, r, "job", page{Title: "Spark Jobs", Heading: title + " — " + u.heading(), Nav: u.nav("/jobs/"), Notices: u.o.notices, Data: v}, u.o.beforeSend)
}

// pagerPages returns the pages a pager links to: the first, the last and
// those around the current one.
func pagerPages(cur, n int) []int {
	var out []int
	for p := 1; p <= n; p++ {
		if p == 1 || p == n || (p >= cur-3 && p <= cur+3) {
			out = append(out, p)
		}
	}
	return out
}
