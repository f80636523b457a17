package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sparkTask returns the TaskStart and TaskEnd lines of a successful task
// of a Spark log: Spark numbers a task's "Index" within its stage.
func sparkTask(stage, id, index int) string {
	info := func(finish int) string {
		return fmt.Sprintf(`"Task Info":{"Task ID":%d,"Index":%d,"Attempt":0,"Partition ID":%d,"Launch Time":1700000001100,"Executor ID":"driver","Host":"10.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":%d,"Failed":false,"Killed":false,"Accumulables":[]}`, id, index, index, finish)
	}
	return fmt.Sprintf(`{"Event":"SparkListenerTaskStart","Stage ID":%d,"Stage Attempt ID":0,%s}
{"Event":"SparkListenerTaskEnd","Stage ID":%d,"Stage Attempt ID":0,"Task Type":"ShuffleMapTask","Task End Reason":{"Reason":"Success"},%s,"Task Metrics":{"Executor Run Time":300,"Result Size":1000}}
`, stage, info(0), stage, info(1700000001500))
}

// A Spark job with a shuffle has two stages, whose tasks Spark numbers
// each from 0: once its four tasks have succeeded, the job has completed
// its four tasks, not two of four. Before, it said 2/4 for ever: a Spark
// task's index is its stage's.
func TestASparkJobOfTwoStagesCompletesAllItsTasks(t *testing.T) {
	head, _, _ := strings.Cut(sparkWrittenLog, `{"Event":"SparkListenerJobStart"`)
	log := head + `{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":1700000001000,"Stage Infos":[{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"map","Number of Tasks":2,"RDD Info":[],"Parent IDs":[],"Details":"x","Accumulables":[]},{"Stage ID":1,"Stage Attempt ID":0,"Stage Name":"count","Number of Tasks":2,"RDD Info":[],"Parent IDs":[0],"Details":"x","Accumulables":[]}],"Stage IDs":[0,1],"Properties":{}}
` + sparkTask(0, 0, 0) + sparkTask(0, 1, 1) + sparkTask(1, 2, 0) + sparkTask(1, 3, 1) +
		`{"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":1700000001800,"Job Result":{"Result":"JobSucceeded"}}
{"Event":"SparkListenerApplicationEnd","Timestamp":1700000002000}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local-1700000000000"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	p, hs := historyServer(t, dir)
	if _, problems, err := p.Store("local-1700000000000"); err != nil || len(problems) != 0 {
		t.Fatalf("its store: %v, problems %q", err, problems)
	}
	var jobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/local-1700000000000/jobs", &jobs)
	if len(jobs) != 1 || jobs[0].NumTasks != 4 || jobs[0].NumCompletedTasks != 4 || jobs[0].NumCompletedIndices != 4 {
		t.Fatalf("jobs = %+v; want its 4 tasks of 4 completed", jobs)
	}
}

// Two jobs of a Spark application that share a stage (a second job
// submitted on the same shuffle while the first computes it: Spark's
// DAGScheduler reuses the running stage, and the second JobStart names
// it): the tasks the first job started end in the first job, which ends
// with no task left running. Before, the second JobStart took the stage,
// and the first job ended with a task running.
func TestASparkStageSharedByTwoJobsEndsItsTasksInTheJobThatStartedThem(t *testing.T) {
	head, _, _ := strings.Cut(sparkWrittenLog, `{"Event":"SparkListenerJobStart"`)
	start, end, _ := strings.Cut(sparkTask(0, 0, 0), "\n")
	log := head + `{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":1700000001000,"Stage Infos":[{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"map","Number of Tasks":1,"RDD Info":[],"Parent IDs":[],"Details":"x","Accumulables":[]},{"Stage ID":1,"Stage Attempt ID":0,"Stage Name":"count","Number of Tasks":1,"RDD Info":[],"Parent IDs":[0],"Details":"x","Accumulables":[]}],"Stage IDs":[0,1],"Properties":{}}
` + start + "\n" +
		`{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":1700000001050,"Stage Infos":[{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"map","Number of Tasks":1,"RDD Info":[],"Parent IDs":[],"Details":"x","Accumulables":[]},{"Stage ID":2,"Stage Attempt ID":0,"Stage Name":"collect","Number of Tasks":1,"RDD Info":[],"Parent IDs":[0],"Details":"x","Accumulables":[]}],"Stage IDs":[0,2],"Properties":{}}
` + end + sparkTask(1, 1, 0) +
		`{"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":1700000001800,"Job Result":{"Result":"JobSucceeded"}}
{"Event":"SparkListenerApplicationEnd","Timestamp":1700000002000}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local-1700000000000"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	p, hs := historyServer(t, dir)
	if _, problems, err := p.Store("local-1700000000000"); err != nil || len(problems) != 0 {
		t.Fatalf("its store: %v, problems %q", err, problems)
	}
	var jobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/local-1700000000000/jobs", &jobs)
	for _, j := range jobs {
		if j.JobID == 0 && (j.NumActiveTasks != 0 || j.NumCompletedTasks != 2) {
			t.Fatalf("job 0 = %+v; want its 2 tasks completed, none running (jobs %+v)", j, jobs)
		}
	}
}

// A Spark job whose first stage was computed by an earlier job (every
// query's last job with adaptive execution, a second action on a shuffle)
// lists that stage in its JobStart, and skips it: Spark's REST API counts
// its tasks as skipped and its UI draws the job as done once the tasks it
// ran have. Before, the job that succeeded said 2/4 for ever.
func TestASparkJobWithASkippedStageIsDone(t *testing.T) {
	head, _, _ := strings.Cut(sparkWrittenLog, `{"Event":"SparkListenerJobStart"`)
	log := head + `{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":1700000001000,"Stage Infos":[{"Stage ID":2,"Stage Attempt ID":0,"Stage Name":"map","Number of Tasks":2,"RDD Info":[],"Parent IDs":[],"Details":"x","Accumulables":[]},{"Stage ID":3,"Stage Attempt ID":0,"Stage Name":"collect","Number of Tasks":2,"RDD Info":[],"Parent IDs":[2],"Details":"x","Accumulables":[]}],"Stage IDs":[2,3],"Properties":{}}
` + sparkTask(3, 4, 0) + sparkTask(3, 5, 1) +
		`{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":1700000001800,"Job Result":{"Result":"JobSucceeded"}}
{"Event":"SparkListenerApplicationEnd","Timestamp":1700000002000}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local-1700000000000"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	p, hs := historyServer(t, dir)
	if _, problems, err := p.Store("local-1700000000000"); err != nil || len(problems) != 0 {
		t.Fatalf("its store: %v, problems %q", err, problems)
	}
	var jobs []struct {
		jobFigures
		NumSkippedTasks int `json:"numSkippedTasks"`
	}
	getJSON(t, hs.URL+"/api/v1/applications/local-1700000000000/jobs", &jobs)
	if len(jobs) != 1 || jobs[0].NumCompletedTasks != 2 || jobs[0].NumSkippedTasks != 2 ||
		jobs[0].NumTasks-jobs[0].NumSkippedTasks != jobs[0].NumCompletedIndices {
		t.Fatalf("jobs = %+v; want its 2 tasks run completed and the 2 of its skipped stage skipped", jobs)
	}
	if code, body := get(t, hs.URL+"/history/local-1700000000000/jobs/"); code != 200 || !strings.Contains(body, ">2/2 (2 skipped)<") {
		t.Fatalf("jobs page = %d; want the job's progress 2/2 (2 skipped):\n%s", code, body)
	}
}
