package managers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// A malformed key of the driver's readiness rule or of its console
// progress bar fails the submission before any cluster manager runs it,
// with a *actor.ConfError naming the key, as a malformed UI key does: it
// is not replaced by its default, silently or with a warning, once the
// application runs.
// Before, each was replaced by its default once the driver ran ("NaN"
// skipped the wait for executors), at most with a warning.
func TestSubmitRefusesMalformedDriverKeys(t *testing.T) {
	m, err := cluster.ParseMaster("local[1]")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value string }{
		{"spark.scheduler.maxRegisteredResourcesWaitingTime", "10x"},
		{"spark.scheduler.maxRegisteredResourcesWaitingTime", "abc"},
		{"spark.scheduler.maxRegisteredResourcesWaitingTime", "-1"},
		{"spark.scheduler.minRegisteredResourcesRatio", "abc"},
		{"spark.scheduler.minRegisteredResourcesRatio", "NaN"},
		{"spark.ui.showConsoleProgress", "maybe"},
		{"spark.ui.consoleProgress.update.interval", "10x"},
		{"spark.ui.consoleProgress.update.interval", "0"},
	} {
		conf := actor.NewConf().Set(tc.key, tc.value)
		submitted := 0
		err := cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp", Conf: conf},
			countingManager{&submitted})
		var ce *actor.ConfError
		if !errors.As(err, &ce) || ce.Key != tc.key || submitted != 0 {
			t.Errorf("%s=%s: Submit = %v after %d submissions, want a *actor.ConfError naming the key and none", tc.key, tc.value, err, submitted)
		}
	}
	// Well-formed values, in Spark's units, are taken.
	for _, kv := range [][2]string{
		{"spark.scheduler.maxRegisteredResourcesWaitingTime", "30000"},
		{"spark.scheduler.maxRegisteredResourcesWaitingTime", "1min"},
		{"spark.scheduler.minRegisteredResourcesRatio", "0.5"},
		{"spark.ui.showConsoleProgress", "true"},
		{"spark.ui.consoleProgress.update.interval", "1s"},
	} {
		submitted := 0
		if err := cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp",
			Conf: actor.NewConf().Set(kv[0], kv[1])}, countingManager{&submitted}); err != nil || submitted != 1 {
			t.Errorf("%s=%s: Submit = %v after %d submissions, want nil and 1", kv[0], kv[1], err, submitted)
		}
	}
}
