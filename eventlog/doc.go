// Package eventlog writes a driver's listener-bus events as an event log
// (Spark's spark.eventLog.*), and reads such logs back: the record a
// history server replays to show an application after it has ended.
//
// # Usage
//
// A driver's runner (package cluster/driverrun) reads the keys with
// ConfigFrom, creates a Writer before the driver and gives it to the
// driver as a listener (endpoints.WithListener), calls Writer.Start once
// the application's id is known, and Writer.Close after the driver has
// stopped. A reader calls List to find the logs of a folder, Replay to
// deliver a log's events to an endpoints.Listener, or Open and then
// Log.Update again and again to follow a log as it grows.
//
// # Writing off the scheduler's path
//
// The listener bus delivers events to every listener on one goroutine; a
// slow listener makes the bus drop events for the others (the UI among
// them). Writer.OnEvent therefore only appends the event's line, encoded
// by hand without reflection (about 100 ns a task event), to a bounded
// queue (16 MiB); the Writer's own goroutine writes the queue to the file
// through a buffer of spark.eventLog.buffer.kb. When the queue is full
// (a slow or full disk), events are dropped, counted (Writer.Dropped) and
// logged at most once a minute; after a write error (logged once) the
// log stops and the events are counted as dropped. The scheduler never
// waits for the disk. Lines written are flushed to the file within a
// second, so that a history server can follow an application that runs.
//
// The application's id may be known only once its driver has started
// (a resource manager gives it): the Writer holds the events it receives
// before Start, and writes nothing before the application's
// ApplicationStart, which it writes first (after SparkListenerLogStart),
// then the events held, in order.
//
// # Keys
//
//	spark.eventLog.enabled            false  write the log
//	spark.eventLog.dir                file:/tmp/spark-events
//	                                         a plain path or a file: URI of a folder that
//	                                         exists; another scheme is an error naming the key
//	spark.eventLog.compress           true   zstd, as Spark 4 (Spark 3 did not compress)
//	spark.eventLog.compression.codec  zstd   the only codec
//	spark.eventLog.rolling.enabled    false  a folder of files instead of one file
//	spark.eventLog.rolling.maxFileSize 128m  at least 10m, as Spark's
//	spark.eventLog.overwrite          false  replace a log of the same application
//	spark.eventLog.buffer.kb          100k   the buffer in front of the file
//
// A log that cannot be created (the folder does not exist, or the
// application's log is there without spark.eventLog.overwrite:
// ErrLogExists) fails the application as its driver starts, as Spark's
// SparkContext fails: a user who asked for a log is told at once rather
// than finding none afterwards.
//
// # Layout
//
// As Spark's: a single file "<dir>/<app>[.zstd]", written as
// "<dir>/<app>[.zstd].inprogress" and renamed when the log is closed; or,
// rolling, a folder "<dir>/eventlog_v2_<app>" holding
// "events_<n>_<app>[.zstd]" files (n from 1; a file holds whole lines,
// started anew before a line that would take it over maxFileSize) and a
// marker "appstatus_<app>.inprogress", renamed "appstatus_<app>" when
// the log is closed. <app> is the application's id, then "_" and its
// attempt id when it has one, made safe for a file name as Spark's
// (' ', ':' and '/' become '-', '.' becomes '_', lower case). Files are
// created 0640 (the user writes, the group, a history server's, reads: a
// log holds the application's error texts), a rolling folder 0770 as
// Spark's so that a history server's cleaner of the group can delete it.
//
// A log that a crashed driver left keeps its ".inprogress" name; its last
// line may be cut short.
//
// # Format
//
// JSON lines, one event a line, Spark's event names in "Event" and Spark's
// field names where the concept is Spark's (JsonProtocol); times are epoch
// milliseconds, durations milliseconds. Fields of sparkrpc's own are
// marked (own) below. The lines, in the order a log has them:
//
//	{"Event":"SparkListenerLogStart","Spark Version":"0.9.1"}
//
// "Spark Version" is the version of the sparkrpc that wrote the log.
//
//	{"Event":"SparkListenerApplicationStart","App Name":"Pi","App ID":"app-1","Timestamp":1700000000123,
//	 "User":"ann","App Attempt ID":"2","Driver Host Port":"10.0.0.1:7077","Driver Logs":{"stdout":"http://h/out"}}
//
// "App Attempt ID" only when there is one; "Driver Host Port" (own): the
// driver's env's address; "Driver Logs": only when there are some.
//
//	{"Event":"SparkListenerEnvironmentUpdate","Timestamp":1700000000124,
//	 "Runtime Information":{"Go Version":"go1.26","Platform":"linux/amd64"},
//	 "Spark Properties":{"spark.app.name":"Pi","spark.authenticate.secret":"*********(redacted)"}}
//
// "Runtime Information" (own, Spark's "JVM Information"): the driver's
// runtime; "Spark Properties": the configuration, sorted, redacted as the
// UI redacts it.
//
//	{"Event":"SparkListenerExecutorAdded","Timestamp":1700000000125,"Executor ID":"1",
//	 "Executor Info":{"Host":"h1","Total Cores":2,"Log Urls":{"stderr":"http://h1/err"},"RPC Address":"h1:4001"}}
//
// "RPC Address" (own): the executor's env's address as the driver sees it.
//
//	{"Event":"SparkListenerExecutorRemoved","Timestamp":1700000000144,"Executor ID":"2","Removed Reason":"disassociated"}
//
//	{"Event":"SparkListenerJobStart","Job ID":1,"Submission Time":1700000000133,"Task Name":"pi","Number of Tasks":2}
//
// "Task Name" (own): the registered task function the job runs; "Number
// of Tasks" (own at this level; Spark's is a stage's): one per payload.
//
//	{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Time":1700000000154,"Duration":21,
//	 "Job Result":{"Result":"JobSucceeded"}}
//	{"Event":"SparkListenerJobEnd","Job ID":2,"Completion Time":1700000000168,"Duration":5,
//	 "Job Result":{"Result":"JobFailed","Exception":{"Message":"job 2 aborted: task 0 failed"}}}
//
// "Duration" (own): from the job's start to its end. A failed job's error
// is read back as an error of the same text (its type is not kept).
//
//	{"Event":"SparkListenerTaskStart","Job ID":1,"Task Info":{"Task ID":0,"Index":0,"Attempt":0,"Partition ID":0,
//	 "Launch Time":1700000000134,"Executor ID":"1","Host":"h1","Speculative":false,"Finish Time":0,
//	 "Failed":false,"Killed":false}}
//
// "Job ID" (own at this level; Spark's tasks name a stage). "Task ID" is
// the attempt's id, unique in the driver; "Index" and "Partition ID" the
// index of its payload in the job; "Host" the host its executor
// registered with.
//
//	{"Event":"SparkListenerTaskEnd","Job ID":1,"Task End Reason":{"Reason":"Success"},
//	 "Task Info":{..., "Finish Time":1700000000143,"Failed":false,"Killed":false},
//	 "Task Metrics":{"Executor Run Time":7,"Result Size":8}}
//
// "Task End Reason"."Reason" is "Success" (the task finished),
// "ExceptionFailure" (it failed: "Class Name" "sparkrpc.TaskFailed" and
// the error in "Description"), "TaskKilled" (the reason in "Kill
// Reason") or "ExecutorLostFailure" ("Executor ID", and the reason in
// "Loss Reason"). "Launch Time" is the finish time less the task's
// duration as the driver measured it; "Executor Run Time" is how long
// the task's function ran as its executor measured it; "Result Size" the
// size of a finished task's result in bytes.
//
//	{"Event":"SparkListenerApplicationEnd","Timestamp":1700000000173,"Error":"job 2 aborted"}
//
// "Error" (own): the application's error, only when it failed.
//
// # Reading
//
// Replay and Log.Update decode every line they can and deliver its event;
// a line that does not decode, and a last line cut short, is skipped,
// counted and reported (Result.Problems: its file, line and error), and
// the reading goes on. So is a line with a value no real log has
// (ErrOutOfRange): a negative id, count, size, duration or time, a task
// count or index over MaxTasks (100,000,000), a time past the year 2262,
// a task that finished before it was launched. A time a line does not
// have, or has as 0, is unknown: the event's Time is the zero time.Time
// (and the writer writes a zero Time as 0). A line over MaxLineSize
// (16 MiB) is read to its end without being kept, and skipped
// (ErrLineTooLong). Lines of events this package does not write (a
// Spark application's stage events) are ignored, undecoded. A log that
// Spark wrote reads as one of sparkrpc's: its task lines, which name their
// stage ("Stage ID") rather than their job, are the tasks of the job that
// started that stage (its JobStart's "Stage IDs"), and a job's "Number of
// Tasks" is its stages' ("Stage Infos") and its name, as Spark's, its
// last stage's. Log.Update delivers the
// lines completed since the last Update: an uncompressed file is read on
// from where the last stopped, a compressed one is decompressed from its
// start again and the lines delivered skipped (a rolling log's finished
// files are never read again). Decoding uses encoding/json: about 1.5 s
// for the 200,000 task events of 100,000 tasks on a small machine.
//
// # Cluster mode
//
// The log is written by the driver, where it runs, in the folder
// spark.eventLog.dir names there; `sparkrpc submit` makes a relative
// spark.eventLog.dir absolute before it ships the configuration. On the
// embedded cluster (local-cluster, and the embedded resource manager)
// every process runs on this machine: the folder is shared as it is, and
// the history server reads it. On rm:// with node managers on other
// machines, a cluster-mode driver runs in its application master's
// container: spark.eventLog.dir must name a folder every node mounts at
// the same path (NFS or the like), which the history server reads too. On
// k8s://, a cluster-mode driver runs in its pod: mount a volume there at
// spark.eventLog.dir (a PersistentVolumeClaim of ReadWriteMany, which the
// history server mounts as well). Client mode writes where submit runs.
//
// # Files
//
//	conf.go     the keys and Config
//	layout.go   the names of a log's files and their permissions
//	encode.go   events encoded as lines
//	files.go    a log's files being written: created, rolled, compressed, renamed
//	writer.go   Writer, the listener that writes a log
//	decode.go   lines decoded as events
//	reader.go   Log, Replay: reading a log, incrementally
//	list.go     List: the logs of a folder
package eventlog
