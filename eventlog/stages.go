// The jobs of a Spark log's stages, by which its task lines, which name
// their stage and not their job, are their job's.

package eventlog

// maxStages bounds the stages a decoder remembers, those of the jobs
// started last: tasks of older stages are skipped (as lines without
// "Job ID"), and a log of many stages does not take the reader's memory.
const maxStages = 1 << 16

// stageInfo is one of a Spark JobStart's "Stage Infos".
type stageInfo struct {
	StageID  *int64 `json:"Stage ID"`
	NumTasks int    `json:"Number of Tasks"`
	Name     string `json:"Stage Name"`
}

// sparkJobName is the name Spark gives a job of stages infos: its last
// stage's (by id), as "count at Main.scala:12".
func sparkJobName(infos []stageInfo) string {
	var name string
	last := int64(-1)
	for _, si := range infos {
		if si.StageID != nil && *si.StageID > last {
			last, name = *si.StageID, si.Name
		}
	}
	return name
}

// stageJob is the job of a stage, and where the stage's tasks start among
// the job's (the tasks of the job's stages before it): a Spark task's
// "Index" is its stage's, and a job's tasks are those of all its stages.
type stageJob struct {
	id     int64
	offset int
}

// startJob remembers the stages of job id (a Spark JobStart's "Stage IDs"
// and "Stage Infos"), and returns the tasks of its stages.
func (d *decoder) startJob(id int64, stages []int64, infos []stageInfo) (tasks int) {
	offsets := make(map[int64]int, len(infos))
	n := 0
	if d.live == nil || len(d.live) >= maxStages || d.pending+len(infos) > maxStages {
		// A log of jobs never ended: they are forgotten.
		d.live, d.pending = make(map[int64]*liveJob), 0
	}
	lj := &liveJob{}
	if len(infos) <= maxStages {
		lj.unrun = make(map[int64]int, len(infos))
	}
	for _, si := range infos {
		if si.StageID != nil {
			offsets[*si.StageID] = n
			if lj.unrun != nil {
				lj.unrun[*si.StageID] = max(si.NumTasks, 0)
			}
		}
		n += max(si.NumTasks, 0)
	}
	if old := d.live[id]; old != nil {
		d.pending -= len(old.unrun)
	}
	d.live[id] = lj
	d.pending += len(lj.unrun)
	if len(stages) > maxStages {
		stages = stages[:maxStages]
	}
	for _, s := range stages {
		if d.stages == nil {
			d.stages = make(map[int64]stageJob)
		}
		if old, ok := d.stages[s]; ok && old.id != id && d.live[old.id] != nil {
			// A stage a running job shares (Spark's DAGScheduler reuses
			// a stage still being computed): its tasks stay that job's.
			continue
		}
		if _, ok := d.stages[s]; !ok {
			if len(d.order) < maxStages {
				d.order = append(d.order, s)
			} else { // forget the stage remembered first
				delete(d.stages, d.order[d.next])
				d.order[d.next] = s
				d.next = (d.next + 1) % maxStages
			}
		}
		d.stages[s] = stageJob{id: id, offset: offsets[s]}
	}
	return n
}

// taskJob returns the job of a task line: its "Job ID", or, in a Spark
// log, the job of its "Stage ID".
func (d *decoder) taskJob(l *line) (stageJob, bool) {
	if l.JobID != nil {
		return stageJob{id: *l.JobID}, true
	}
	if l.StageID != nil {
		j, ok := d.stages[*l.StageID]
		if lj := d.live[j.id]; ok && lj != nil {
			if _, unrun := lj.unrun[*l.StageID]; unrun {
				delete(lj.unrun, *l.StageID)
				d.pending--
			}
		}
		return j, ok
	}
	return stageJob{}, false
}

// liveJob is a Spark job started and not ended: the tasks of those of its
// stages that ran none yet, by stage id. Those that still ran none at its
// end it skipped.
type liveJob struct {
	unrun map[int64]int
}

// endJob forgets job id and returns the tasks of its stages that ran none
// (Spark's skipped stages).
func (d *decoder) endJob(id int64) (skipped int) {
	lj := d.live[id]
	if lj == nil {
		return 0
	}
	for _, n := range lj.unrun {
		skipped += n
	}
	d.pending -= len(lj.unrun)
	delete(d.live, id)
	return min(skipped, MaxTasks)
}
