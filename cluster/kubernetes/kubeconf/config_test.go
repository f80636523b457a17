package kubeconf

import (
	"errors"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

func TestOverhead(t *testing.T) {
	for _, tc := range []struct {
		mem, factor, over string
		want              int64
	}{
		{"1g", "", "", 384}, {"10g", "", "", 1024}, {"10g", "0.2", "", 2048}, {"1g", "", "100m", 100},
	} {
		conf := actor.NewConf().Set(KeyContainerImage, "i").Set(cluster.KeyExecutorMemory, tc.mem)
		if tc.factor != "" {
			conf.Set(KeyMemoryOverheadFactor, tc.factor)
		}
		if tc.over != "" {
			conf.Set(KeyExecutorMemoryOverhead, tc.over)
		}
		c, err := Parse(conf, "a")
		if err != nil || c.ExecutorOverheadMiB != tc.want {
			t.Errorf("%+v: overhead %v, %v; want %d", tc, c, err, tc.want)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
	}{
		{"no image", "", ""},
		{"bad namespace", KeyNamespace, "Not_A_Namespace"},
		{"bad prefix", KeyExecutorPodNamePrefix, "UPPER"},
		{"long prefix", KeyExecutorPodNamePrefix, strings.Repeat("a", 48)},
		{"reserved label", KeyExecutorLabelPrefix + LabelRole, "x"},
		{"bad label value", KeyExecutorLabelPrefix + "a", "not valid!"},
		{"bad batch size", KeyBatchSize, "0"},
		{"bad readiness timeout", KeyDriverReadinessTimeout, "0s"},
		{"bad factor", KeyMemoryOverheadFactor, "2"},
		{"bad cores", cluster.KeyExecutorCores, "0"},
		{"bad pull policy", KeyImagePullPolicy, "Sometimes"},
		{"bad cpu limit", KeyExecutorLimitCores, "lots"},
		{"bad driver volume", DriverKeys.VolumesPrefix + "emptyDir.x.mount.path", "relative"},
		{"bad executor env", KeyExecutorEnvPrefix + "A=B", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := actor.NewConf()
			if tc.name != "no image" {
				conf.Set(KeyContainerImage, "img")
			}
			if tc.key != "" {
				conf.Set(tc.key, tc.value)
			}
			_, err := Parse(conf, "a")
			var ce *actor.ConfError
			if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
				t.Fatalf("Parse = %v; want ErrInvalidConfig with a ConfError", err)
			}
			if tc.key != "" && ce.Key != tc.key {
				t.Fatalf("error names %s, want %s", ce.Key, tc.key)
			}
		})
	}
}
