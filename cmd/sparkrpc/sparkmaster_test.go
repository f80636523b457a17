package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spark-submit takes the master from spark.master, in a --properties-file
// or a --conf, when --master is not given ("if the spark.master property is
// set, you can safely omit the --master flag from spark-submit"). Submit
// must then run on that master, not on the default local[*].
func TestSparkMasterFromConfIsUsed(t *testing.T) {
	marker := newMarker(t)
	props := filepath.Join(t.TempDir(), "spark-defaults.conf")
	if err := os.WriteFile(props, []byte("spark.master rm://127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"properties file", []string{"--properties-file", props}},
		{"conf", []string{"--conf", "spark.master=rm://127.0.0.1:1"}},
		{"conf bogus master", []string{"--conf", "spark.master=no-such-master"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"submit"}, tc.args...), "--class", "SparkPi", "spark-internal", "1")
			stdout, stderr, code := runBin(t, marker, time.Minute, args...)
			if code == 0 || strings.Contains(stdout, "Pi is roughly") {
				t.Fatalf("%v: exit %d and the application ran on the default local[*]: spark.master was ignored\nstdout:\n%s\nstderr:\n%s",
					tc.args, code, stdout, stderr)
			}
		})
	}
}
