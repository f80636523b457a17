package managers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// A malformed key of the driver's task scheduler, heartbeats or listener
// bus fails the submission before any cluster manager runs it, with an
// error naming the key. Before, the submission went ahead, and in cluster
// mode the application failed only once its driver started on the cluster.
func TestSubmitRefusesMalformedSchedulerKeys(t *testing.T) {
	m, err := cluster.ParseMaster("local[1]")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value string }{
		{"spark.task.maxFailures", "0"},
		{"spark.task.cpus", "x"},
		{"spark.driver.maxResultSize", "-1"},
		{"spark.driver.maxResultSize", "1x"},
		{"spark.scheduler.revive.interval", "abc"},
		{"spark.starvation.timeout", "0"},
		{"spark.network.timeoutInterval", "0"},
		{"spark.executor.heartbeatInterval", "200s"},
		{"spark.scheduler.listenerbus.eventqueue.capacity", "0"},
	} {
		submitted := 0
		err := cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp",
			Conf: actor.NewConf().Set(tc.key, tc.value)}, countingManager{&submitted})
		if err == nil || !strings.Contains(err.Error(), tc.key) || submitted != 0 {
			t.Errorf("%s=%s: Submit = %v after %d submissions, want an error naming the key and none", tc.key, tc.value, err, submitted)
		}
	}
	submitted := 0
	if err := cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp",
		Conf: actor.NewConf().Set("spark.driver.maxResultSize", "2g").Set("spark.task.maxFailures", "8")},
		countingManager{&submitted}); err != nil || submitted != 1 {
		t.Errorf("well-formed keys: Submit = %v after %d submissions, want nil and 1", err, submitted)
	}
}
