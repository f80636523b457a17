package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/messages"
)

// TestSubmitWritesTheEventLog runs SparkPi with the event log on, in this
// process (local[2], and local-cluster's client mode, whose application id
// comes from the resource manager once the driver runs) and in an
// application master (local-cluster, cluster mode), and reads the log back: the application's start and end, its
// executors, its job and every task.
func TestSubmitWritesTheEventLog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		executors int
	}{
		{"local", []string{"--master", "local[2]"}, 1},
		{"local-cluster cluster mode", []string{"--master", "local-cluster[2,1,1024]", "--deploy-mode", "cluster"}, 2},
		{"local-cluster client mode", []string{"--master", "local-cluster[2,1,1024]", "--deploy-mode", "client"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := newMarker(t)
			dir := t.TempDir()
			args := append([]string{"submit"}, tc.args...)
			args = append(args, "--conf", "spark.eventLog.enabled=true", "--conf", "spark.eventLog.dir="+dir,
				"--class", "SparkPi", "spark-internal", "10")
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			checkPi(t, stdout, 10)
			logs, err := eventlog.List(dir)
			if err != nil || len(logs) != 1 || logs[0].InProgress || !logs[0].Compressed {
				t.Fatalf("List = %+v, %v; want one finished, compressed log", logs, err)
			}
			count := map[string]int{}
			var start endpoints.ApplicationStart
			var end endpoints.ApplicationEnd
			res, err := eventlog.Replay(logs[0].Path, endpoints.ListenerFunc(func(ev endpoints.Event) {
				switch e := ev.(type) {
				case endpoints.ApplicationStart:
					start = e
				case endpoints.ApplicationEnd:
					end = e
				case endpoints.TaskEnd:
					if e.State != messages.TaskState_TASK_STATE_FINISHED || e.ResultSize != 8 {
						t.Errorf("task %d: %v, %d bytes", e.TaskID, e.State, e.ResultSize)
					}
				case endpoints.EnvironmentUpdate:
					if len(e.Properties) == 0 || e.Runtime["Go Version"] == "" {
						t.Errorf("environment %+v", e)
					}
				}
				count[eventName(ev)]++
			}))
			if err != nil || res.Skipped != 0 {
				t.Fatalf("Replay = %+v, %v", res, err)
			}
			if start.AppID == "" || start.AppID != logs[0].AppID || start.AppName == "" || start.DriverHostPort == "" || end.Error != "" {
				t.Errorf("start %+v, end %+v", start, end)
			}
			want := map[string]int{"ApplicationStart": 1, "EnvironmentUpdate": 1, "ExecutorAdded": tc.executors,
				"JobStart": 1, "JobEnd": 1, "TaskStart": 10, "TaskEnd": 10, "ApplicationEnd": 1}
			for k, n := range want {
				if count[k] != n {
					t.Errorf("%d %s events, want %d (all: %v)", count[k], k, n, count)
				}
			}
		})
	}
}

// eventName returns "TaskEnd" for an endpoints.TaskEnd and so on.
func eventName(ev endpoints.Event) string {
	switch ev.(type) {
	case endpoints.ApplicationStart:
		return "ApplicationStart"
	case endpoints.EnvironmentUpdate:
		return "EnvironmentUpdate"
	case endpoints.ApplicationEnd:
		return "ApplicationEnd"
	case endpoints.ExecutorAdded:
		return "ExecutorAdded"
	case endpoints.ExecutorRemoved:
		return "ExecutorRemoved"
	case endpoints.JobStart:
		return "JobStart"
	case endpoints.JobEnd:
		return "JobEnd"
	case endpoints.TaskStart:
		return "TaskStart"
	case endpoints.TaskEnd:
		return "TaskEnd"
	}
	return "?"
}

// TestSubmitFailsOnAnEventLogItCannotWrite: a folder of another scheme is
// refused before anything starts, a missing folder fails the application
// as its driver starts; both name the key.
func TestSubmitFailsOnAnEventLogItCannotWrite(t *testing.T) {
	for _, dir := range []string{"hdfs://namenode/logs", filepath.Join(t.TempDir(), "missing")} {
		marker := newMarker(t)
		stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[2]",
			"--conf", "spark.eventLog.enabled=true", "--conf", "spark.eventLog.dir="+dir, "--class", "SparkPi", "spark-internal", "2")
		if code == 0 || !strings.Contains(stderr, eventlog.KeyDir) {
			t.Fatalf("%s: exit %d; want a failure naming %s\nstdout:\n%s\nstderr:\n%s", dir, code, eventlog.KeyDir, stdout, stderr)
		}
	}
}
