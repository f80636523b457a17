package webui

// This file holds the event timelines (Spark's on the jobs and job pages),
// drawn on the server as SVG: the application's executors and jobs over
// its time, and a job's tasks per executor. Their size is bounded: at most
// maxTimelineJobs jobs and maxTimelineTasks tasks are drawn, and the page
// says how many are not.

import (
	"fmt"
	"math"
	"slices"
	"time"
)

const (
	maxTimelineJobs  = 500  // the newest jobs drawn on the jobs page
	maxTimelineTasks = 1000 // the first tasks drawn on a job's page
	maxTimelineRows  = 12   // rows of bars in a lane; more overlap in the last
	maxTimelineLanes = 32   // executors' lanes on a job's page

	timelineWidth = 1000
	timelineLeft  = 110 // the lane labels' width
	timelineRight = 10
	timelineRow   = 16 // a row's height
	timelineAxis  = 20 // the time axis' height
)

// timelineSpan is something that lasted, to draw as a bar.
type timelineSpan struct {
	start, end time.Time
	class      string // the status: SUCCEEDED, FAILED, RUNNING, SUCCESS, ...
	title      string
	href       string
}

// timelineLane is a labelled lane of spans, or of marks.
type timelineLane struct {
	label string
	spans []timelineSpan
	marks []timelineSpan // instants (start only)
}

// svgTimeline is a timeline's geometry, as its template draws it.
type svgTimeline struct {
	ID            string
	Width, Height int
	Left, Right   int
	Ticks         []svgTick
	Lanes         []svgLane
	Bars          []svgBar
	Marks         []svgMark
	NotDrawn      int    // items left out
	NotDrawnWhat  string // "jobs", "tasks"
}

type svgTick struct {
	X     int
	Label string
}

type svgLane struct {
	Y, H   int
	LabelY int
	Label  string
}

type svgBar struct {
	X, Y, W, H  int
	Class       string
	Title, Href string
}

type svgMark struct {
	X, Y         int
	Class, Title string
}

// drawTimeline lays lanes out over [from, to].
func drawTimeline(id string, from, to time.Time, lanes []timelineLane) svgTimeline {
	if !to.After(from) {
		to = from.Add(time.Second)
	}
	plot := float64(timelineWidth - timelineLeft - timelineRight)
	x := func(t time.Time) int {
		if t.Before(from) {
			t = from
		}
		if t.After(to) {
			t = to
		}
		return timelineLeft + int(plot*float64(t.Sub(from))/float64(to.Sub(from)))
	}
	tl := svgTimeline{ID: id, Width: timelineWidth, Left: timelineLeft, Right: timelineWidth - timelineRight}
	y := timelineAxis
	for _, lane := range lanes {
		rows := 1
		if len(lane.spans) > 0 {
			var rowOf []int
			rowOf, rows = packRows(lane.spans, x)
			for i, s := range lane.spans {
				x0 := x(s.start)
				tl.Bars = append(tl.Bars, svgBar{X: x0, Y: y + rowOf[i]*timelineRow + 2, W: max(2, x(s.end)-x0),
					H: timelineRow - 4, Class: s.class, Title: s.title, Href: s.href})
			}
		}
		for _, m := range lane.marks {
			tl.Marks = append(tl.Marks, svgMark{X: x(m.start), Y: y + timelineRow/2, Class: m.class, Title: m.title})
		}
		h := rows * timelineRow
		tl.Lanes = append(tl.Lanes, svgLane{Y: y, H: h, LabelY: y + timelineRow - 4, Label: lane.label})
		y += h
	}
	tl.Height = y + 2
	tl.Ticks = ticks(from, to, x)
	return tl
}

// packRows puts each span in the first row where it does not overlap the
// previous one (at most maxTimelineRows rows); spans must be in start
// order.
func packRows(spans []timelineSpan, x func(time.Time) int) ([]int, int) {
	var ends []int // each row's right edge
	rowOf := make([]int, len(spans))
	for i, s := range spans {
		x0 := x(s.start)
		r := slices.IndexFunc(ends, func(e int) bool { return e < x0 })
		if r < 0 && len(ends) < maxTimelineRows {
			ends = append(ends, 0)
			r = len(ends) - 1
		}
		if r < 0 {
			r = len(ends) - 1
		}
		ends[r] = max(ends[r], x(s.end)+1, x0+2)
		rowOf[i] = r
	}
	return rowOf, max(1, len(ends))
}

// maxTimelineTicks bounds a time axis' ticks, whatever its span.
const maxTimelineTicks = 12

// tickStep returns the step of about five ticks over span: a round
// duration, from a millisecond to days by 1, 2 and 5 times a power of ten
// (no upper limit but time.Duration's).
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second,
		5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
		30 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour} {
		if span/s <= 6 {
			return s
		}
	}
	day := 24 * time.Hour
	for m := 10 * day; m < math.MaxInt64/50; m *= 10 {
		for _, f := range []time.Duration{1, 2, 5} {
			if span/(f*m) <= 6 {
				return f * m
			}
		}
	}
	return math.MaxInt64 / 6
}

// ticks returns about five labelled ticks over [from, to], at most
// maxTimelineTicks.
func ticks(from, to time.Time, x func(time.Time) int) []svgTick {
	step := tickStep(to.Sub(from))
	layout := "15:04:05"
	switch {
	case step < time.Second:
		layout = "15:04:05.000"
	case step >= 24*time.Hour:
		layout = "2006-01-02"
	}
	var out []svgTick
	for t := from.Truncate(step); !t.After(to) && len(out) < maxTimelineTicks; t = t.Add(step) {
		if t.Before(from) {
			continue
		}
		out = append(out, svgTick{X: x(t), Label: t.Format(layout)})
	}
	return out
}

// earliest returns the earlier of from and t, a zero time being unknown.
func earliest(from, t time.Time) time.Time {
	if t.IsZero() || (!from.IsZero() && !t.Before(from)) {
		return from
	}
	return t
}

// appTimeline draws the executors added and removed and the newest jobs
// over the application's time, from its start (or, unknown, the earliest
// time known) up to now; times before are drawn at its start, unknown
// (zero) ones are not drawn.
func appTimeline(app AppInfo, execs []executorStatus, jobs []jobStatus, now time.Time, base string) svgTimeline {
	from := app.Start
	var marks []timelineSpan
	for _, ex := range execs {
		if ex.IsDriver() {
			continue
		}
		if app.Start.IsZero() {
			from = earliest(from, ex.AddTime)
		}
		if !ex.AddTime.IsZero() {
			marks = append(marks, timelineSpan{start: ex.AddTime, class: "added",
				title: fmt.Sprintf("Executor %s added at %s", ex.ID, ex.AddTime.Format("15:04:05"))})
		}
		if !ex.IsActive() {
			marks = append(marks, timelineSpan{start: ex.RemoveTime, class: "removed",
				title: fmt.Sprintf("Executor %s removed at %s: %s", ex.ID, ex.RemoveTime.Format("15:04:05"), ex.RemoveReason)})
		}
	}
	jobs = slices.DeleteFunc(jobs, func(j jobStatus) bool { return j.Submitted.IsZero() })
	slices.SortFunc(jobs, func(a, b jobStatus) int { return a.Submitted.Compare(b.Submitted) })
	notDrawn := max(0, len(jobs)-maxTimelineJobs)
	jobs = jobs[notDrawn:]
	spans := make([]timelineSpan, 0, len(jobs))
	for _, j := range jobs {
		if app.Start.IsZero() {
			from = earliest(from, j.Submitted)
		}
		end := j.Ended
		if end.IsZero() {
			end = now
		}
		spans = append(spans, timelineSpan{start: j.Submitted, end: end, class: j.Status,
			title: fmt.Sprintf("Job %d (%s): %s, %s", j.ID, j.Name, j.Status, formatDuration(end.Sub(j.Submitted))),
			href:  fmt.Sprintf("%s/jobs/job/?id=%d", base, j.ID)})
	}
	if from.IsZero() || from.After(now) {
		from = now
	}
	tl := drawTimeline("app-timeline", from, now, []timelineLane{{label: "Executors", marks: marks}, {label: "Jobs", spans: spans}})
	tl.NotDrawn, tl.NotDrawnWhat = notDrawn, "older jobs"
	return tl
}

// jobTimeline draws the first tasks of job j per executor, over the job's
// time (from its submission, or, unknown, its first task's launch);
// tasks of an unknown launch are not drawn.
func jobTimeline(j jobStatus, tasks []taskView, total int, now time.Time) svgTimeline {
	end := j.Ended
	if end.IsZero() {
		end = now
	}
	from := j.Submitted
	if from.IsZero() {
		for _, t := range tasks {
			from = earliest(from, t.Launch)
		}
	}
	if from.IsZero() || from.After(end) {
		from = end
	}
	var lanes []timelineLane
	lane := map[string]int{}
	notDrawn := total - len(tasks)
	for _, t := range tasks {
		if t.Launch.IsZero() {
			notDrawn++
			continue
		}
		i, ok := lane[t.ExecutorID]
		if !ok {
			if len(lanes) == maxTimelineLanes {
				notDrawn++
				continue
			}
			i = len(lanes)
			lane[t.ExecutorID] = i
			lanes = append(lanes, timelineLane{label: "Executor " + t.ExecutorID})
		}
		tEnd := t.Launch.Add(t.Duration)
		lanes[i].spans = append(lanes[i].spans, timelineSpan{start: t.Launch, end: tEnd, class: t.Status,
			title: fmt.Sprintf("Task %d (index %d, attempt %d) on %s: %s, %s", t.TaskID, t.Index, t.Attempt, t.Host,
				t.Status, formatDuration(t.Duration))})
	}
	tl := drawTimeline("job-timeline", from, end, lanes)
	tl.NotDrawn, tl.NotDrawnWhat = notDrawn, "tasks"
	return tl
}
