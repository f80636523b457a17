package endpoints_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

func TestParseAllocationConfigDefaults(t *testing.T) {
	c, err := endpoints.ParseAllocationConfig(actor.NewConf())
	if err != nil {
		t.Fatal(err)
	}
	want := endpoints.AllocationConfig{MaxExecutors: math.MaxInt32, IdleTimeout: 60 * time.Second, BacklogTimeout: time.Second,
		SustainedBacklogTimeout: time.Second, AllocationRatio: 1, TasksPerExecutor: 1}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestParseAllocationConfigReadsEveryKey(t *testing.T) {
	conf := actor.NewConf().Set(endpoints.KeyDynamicAllocationEnabled, "true").
		Set(endpoints.KeyDynamicAllocationMinExecutors, "1").
		Set(endpoints.KeyDynamicAllocationMaxExecutors, "8").
		Set(endpoints.KeyDynamicAllocationInitialExecutors, "2").
		Set(endpoints.KeyDynamicAllocationExecutorIdleTimeout, "30"). // seconds
		Set(endpoints.KeyDynamicAllocationSchedulerBacklogTimeout, "500ms").
		Set(endpoints.KeyDynamicAllocationSustainedBacklogTimeout, "2s").
		Set(endpoints.KeyDynamicAllocationExecutorAllocationRatio, "0.5").
		Set("spark.executor.cores", "4").Set(endpoints.KeyTaskCpus, "2")
	c, err := endpoints.ParseAllocationConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	want := endpoints.AllocationConfig{Enabled: true, MinExecutors: 1, MaxExecutors: 8, InitialExecutors: 2, IdleTimeout: 30 * time.Second,
		BacklogTimeout: 500 * time.Millisecond, SustainedBacklogTimeout: 2 * time.Second, AllocationRatio: 0.5, TasksPerExecutor: 2}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	// The sustained timeout defaults to the backlog timeout.
	conf.Remove(endpoints.KeyDynamicAllocationSustainedBacklogTimeout)
	if c, err = endpoints.ParseAllocationConfig(conf); err != nil || c.SustainedBacklogTimeout != 500*time.Millisecond {
		t.Fatalf("sustained timeout %v, %v; want 500ms", c.SustainedBacklogTimeout, err)
	}
}

func TestParseAllocationConfigRejects(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"negative min", endpoints.KeyDynamicAllocationMinExecutors, "-1", "must not be negative"},
		{"max 0", endpoints.KeyDynamicAllocationMaxExecutors, "0", "cannot be 0"},
		{"min over max", endpoints.KeyDynamicAllocationMinExecutors, "9", "must be less than or equal"},
		{"initial over max", endpoints.KeyDynamicAllocationInitialExecutors, "9", "must be between"},
		{"backlog timeout 0", endpoints.KeyDynamicAllocationSchedulerBacklogTimeout, "0", "must be > 0"},
		{"sustained timeout 0", endpoints.KeyDynamicAllocationSustainedBacklogTimeout, "0", "must be > 0"},
		{"negative idle timeout", endpoints.KeyDynamicAllocationExecutorIdleTimeout, "-1s", "-1s"},
		{"ratio 0", endpoints.KeyDynamicAllocationExecutorAllocationRatio, "0", "must be > 0 and <= 1.0"},
		{"ratio over 1", endpoints.KeyDynamicAllocationExecutorAllocationRatio, "1.5", "must be > 0 and <= 1.0"},
		{"not a number", endpoints.KeyDynamicAllocationExecutorAllocationRatio, "half", "half"},
		{"not a boolean", endpoints.KeyDynamicAllocationEnabled, "maybe", "maybe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := actor.NewConf().Set(endpoints.KeyDynamicAllocationMaxExecutors, "8").Set(tt.key, tt.value)
			_, err := endpoints.ParseAllocationConfig(conf)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want one saying %q", err, tt.want)
			}
			var ce *actor.ConfError
			if !errors.Is(err, endpoints.ErrInvalidConfig) && !errors.As(err, &ce) {
				t.Fatalf("error %v is neither ErrInvalidConfig nor a *actor.ConfError", err)
			}
		})
	}
}

// As Spark: the application starts with the largest of minExecutors,
// initialExecutors and spark.executor.instances, with a warning when
// spark.executor.instances raised it; without dynamic allocation there is
// nothing to say.
func TestInitialExecutors(t *testing.T) {
	tests := []struct {
		name     string
		kv       []string
		want     int
		ok, warn bool
	}{
		{"off", nil, 0, false, false},
		{"default: minExecutors", []string{endpoints.KeyDynamicAllocationEnabled, "true", endpoints.KeyDynamicAllocationMinExecutors, "1"}, 1, true, false},
		{"initialExecutors", []string{endpoints.KeyDynamicAllocationEnabled, "true", endpoints.KeyDynamicAllocationInitialExecutors, "3"}, 3, true, false},
		{"instances larger", []string{endpoints.KeyDynamicAllocationEnabled, "true", endpoints.KeyDynamicAllocationInitialExecutors, "1",
			"spark.executor.instances", "5"}, 5, true, true},
		{"instances smaller", []string{endpoints.KeyDynamicAllocationEnabled, "true", endpoints.KeyDynamicAllocationInitialExecutors, "3",
			"spark.executor.instances", "2"}, 3, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := actor.NewConf()
			for i := 0; i < len(tt.kv); i += 2 {
				conf.Set(tt.kv[i], tt.kv[i+1])
			}
			n, warning, ok, err := endpoints.InitialExecutors(conf)
			if err != nil || n != tt.want || ok != tt.ok || (warning != "") != tt.warn {
				t.Fatalf("InitialExecutors = %d, %q, %v, %v; want %d, ok %v, warning %v", n, warning, ok, err, tt.want, tt.ok, tt.warn)
			}
		})
	}
}
