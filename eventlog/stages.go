// The jobs of a Spark log's stages, by which its task lines, which name
// their stage and not their job, are their job's.

package eventlog

// maxStages bounds the stages a decoder remembers, those of the jobs
// started last: tasks of older stages are skipped (as lines without
// "Job ID"), and a log of many stages does not take the reader's memory.
const maxStages = 1 << 16

// startJob remembers the stages of job id (a Spark JobStart's "Stage IDs").
func (d *decoder) startJob(id int64, stages []int64) {
	if len(stages) > maxStages {
		stages = stages[:maxStages]
	}
	for _, s := range stages {
		if d.stages == nil {
			d.stages = make(map[int64]int64)
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
		d.stages[s] = id
	}
}

// taskJob returns the job of a task line: its "Job ID", or, in a Spark
// log, the job of its "Stage ID".
func (d *decoder) taskJob(l *line) (int64, bool) {
	if l.JobID != nil {
		return *l.JobID, true
	}
	if l.StageID != nil {
		id, ok := d.stages[*l.StageID]
		return id, ok
	}
	return 0, false
}
