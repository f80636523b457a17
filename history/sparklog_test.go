package history_test

import (
	"os"
	"path/filepath"
	"testing"
)

// sparkWrittenLog is a log as Spark 3.5 writes it (trimmed of fields that
// make no difference): its task lines name their stage, not their job.
const sparkWrittenLog = `{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}
{"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":0,"Executor Resource Requests":{"cores":{"Resource Name":"cores","Amount":1,"Discovery Script":"","Vendor":""}},"Task Resource Requests":{"cpus":{"Resource Name":"cpus","Amount":1.0}}}
{"Event":"SparkListenerExecutorAdded","Timestamp":1700000000100,"Executor ID":"driver","Executor Info":{"Host":"10.0.0.1","Total Cores":2,"Log Urls":{},"Attributes":{},"Resources":{},"Resource Profile Id":0,"Registration Time":1700000000100,"Request Time":null}}
{"Event":"SparkListenerBlockManagerAdded","Block Manager ID":{"Executor ID":"driver","Host":"10.0.0.1","Port":40000},"Maximum Memory":455501414,"Timestamp":1700000000100,"Maximum Onheap Memory":455501414,"Maximum Offheap Memory":0}
{"Event":"SparkListenerEnvironmentUpdate","JVM Information":{"Java Home":"/usr/lib/jvm/java-17","Java Version":"17.0.9 (Eclipse Adoptium)","Scala Version":"version 2.12.18"},"Spark Properties":{"spark.master":"local[2]","spark.app.name":"Spark Pi"},"Hadoop Properties":{},"System Properties":{"java.io.tmpdir":"/tmp"},"Metrics Properties":{},"Classpath Entries":{"/opt/spark/jars/a.jar":"System Classpath"}}
{"Event":"SparkListenerApplicationStart","App Name":"Spark Pi","App ID":"local-1700000000000","Timestamp":1700000000000,"User":"ann"}
{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":1700000001000,"Stage Infos":[{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"reduce at SparkPi.scala:38","Number of Tasks":2,"RDD Info":[],"Parent IDs":[],"Details":"x","Accumulables":[],"Resource Profile Id":0}],"Stage IDs":[0],"Properties":{"spark.rdd.scope":"{\"id\":\"1\",\"name\":\"reduce\"}"}}
{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"reduce at SparkPi.scala:38","Number of Tasks":2,"RDD Info":[],"Parent IDs":[],"Details":"x","Submission Time":1700000001010,"Accumulables":[],"Resource Profile Id":0},"Properties":{}}
{"Event":"SparkListenerTaskStart","Stage ID":0,"Stage Attempt ID":0,"Task Info":{"Task ID":0,"Index":0,"Attempt":0,"Partition ID":0,"Launch Time":1700000001100,"Executor ID":"driver","Host":"10.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":0,"Failed":false,"Killed":false,"Accumulables":[]}}
{"Event":"SparkListenerTaskStart","Stage ID":0,"Stage Attempt ID":0,"Task Info":{"Task ID":1,"Index":1,"Attempt":0,"Partition ID":1,"Launch Time":1700000001100,"Executor ID":"driver","Host":"10.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":0,"Failed":false,"Killed":false,"Accumulables":[]}}
{"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":0,"Index":0,"Attempt":0,"Partition ID":0,"Launch Time":1700000001100,"Executor ID":"driver","Host":"10.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":1700000001500,"Failed":false,"Killed":false,"Accumulables":[{"ID":1,"Name":"internal.metrics.executorRunTime","Update":300,"Value":300,"Internal":true,"Count Failed Values":true}]},"Task Executor Metrics":{"JVMHeapMemory":0},"Task Metrics":{"Executor Deserialize Time":10,"Executor Run Time":300,"Result Size":1000,"JVM GC Time":0,"Shuffle Read Metrics":{"Remote Blocks Fetched":0},"Shuffle Write Metrics":{"Shuffle Bytes Written":0},"Input Metrics":{"Bytes Read":0},"Output Metrics":{"Bytes Written":0},"Updated Blocks":[]}}
{"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"ExceptionFailure","Class Name":"java.lang.RuntimeException","Description":"boom","Stack Trace":[],"Full Stack Trace":"x","Accumulator Updates":[]},"Task Info":{"Task ID":1,"Index":1,"Attempt":0,"Partition ID":1,"Launch Time":1700000001100,"Executor ID":"driver","Host":"10.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":1700000001600,"Failed":true,"Killed":false,"Accumulables":[]},"Task Executor Metrics":{"JVMHeapMemory":0},"Task Metrics":{"Executor Run Time":400,"Result Size":0,"Updated Blocks":[]}}
{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"reduce","Number of Tasks":2,"RDD Info":[],"Parent IDs":[],"Details":"x","Submission Time":1700000001010,"Completion Time":1700000001700,"Accumulables":[],"Resource Profile Id":0}}
{"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":1700000001800,"Job Result":{"Result":"JobSucceeded"}}
{"Event":"SparkListenerApplicationEnd","Timestamp":1700000002000}
`

// A log that Spark wrote shows its tasks: its task lines name their stage,
// which its job's start names. Before, every task line was skipped as
// "missing field Job ID", the job showed no tasks, and every page said the
// log could not all be read.
func TestASparkWrittenLogShowsItsTasks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local-1700000000000"), []byte(sparkWrittenLog), 0o600); err != nil {
		t.Fatal(err)
	}
	p, hs := historyServer(t, dir)
	if apps := p.Applications(); len(apps) != 1 || len(apps[0].Problems) != 0 {
		t.Fatalf("applications = %+v; want one, read whole", apps)
	}
	_, problems, err := p.Store("local-1700000000000")
	if err != nil || len(problems) != 0 {
		t.Fatalf("its store: %v, problems %q", err, problems)
	}
	var jobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/local-1700000000000/jobs", &jobs)
	if len(jobs) != 1 || jobs[0].NumTasks != 2 || jobs[0].NumCompletedTasks != 1 || jobs[0].NumFailedTasks != 1 {
		t.Fatalf("jobs = %+v; want the job's 2 tasks, one completed and one failed", jobs)
	}
	var tasks []struct {
		TaskID       int64  `json:"taskId"`
		Status       string `json:"status"`
		ErrorMessage string `json:"errorMessage"`
	}
	getJSON(t, hs.URL+"/api/v1/applications/local-1700000000000/stages/0/0/taskList", &tasks)
	if len(tasks) != 2 || tasks[1].ErrorMessage != "boom" {
		t.Fatalf("tasks = %+v", tasks)
	}
}
