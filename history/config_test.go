package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/history"
)

func TestConfigFromConf(t *testing.T) {
	cfg, err := history.ConfigFromConf(actor.NewConf())
	if err != nil || cfg.Dir != history.DefaultLogDirectory || cfg.UpdateInterval != 10*time.Second || cfg.RetainedApplications != 50 {
		t.Fatalf("defaults = %+v, %v", cfg, err)
	}
	cfg, err = history.ConfigFromConf(actor.NewConf().Set(history.KeyLogDirectory, "file:///var/spark-events").
		Set(history.KeyUpdateInterval, "2s").Set(history.KeyRetainedApplications, "3"))
	if err != nil || cfg.Dir != "/var/spark-events" || cfg.UpdateInterval != 2*time.Second || cfg.RetainedApplications != 3 {
		t.Fatalf("set = %+v, %v", cfg, err)
	}
	for key, value := range map[string]string{
		history.KeyLogDirectory:         "hdfs://nn/spark-events",
		history.KeyUpdateInterval:       "soon",
		history.KeyRetainedApplications: "0",
	} {
		if _, err := history.ConfigFromConf(actor.NewConf().Set(key, value)); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: error %v, want one naming the key", key, value, err)
		}
	}
}

// A folder that cannot be read is an error when the provider starts.
func TestProviderOfAMissingFolder(t *testing.T) {
	_, err := history.NewProvider(history.Config{Dir: t.TempDir() + "/nope", RetainedApplications: 1})
	if err == nil || !strings.Contains(err.Error(), history.KeyLogDirectory) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("NewProvider of a missing folder: %v", err)
	}
}
