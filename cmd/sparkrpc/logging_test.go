package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/cli"
)

// jsonRecords parses every line of out that is a JSON object, fails the
// test for a record that holds a field twice, and returns the records.
func jsonRecords(t *testing.T, what, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Errorf("%s: not a JSON record: %s", what, line)
			continue
		}
		rec := map[string]any{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Errorf("%s: %v in %s", what, err, line)
				break
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%s: %v in %s", what, err, line)
				break
			}
			key := tok.(string)
			if _, dup := rec[key]; dup {
				t.Errorf("%s: field %q appears twice in %s", what, key, line)
			}
			rec[key] = v
		}
		recs = append(recs, rec)
	}
	return recs
}

// countRecords counts the records with every field of want.
func countRecords(recs []map[string]any, want map[string]string) int {
	n := 0
	for _, r := range recs {
		ok := true
		for k, v := range want {
			if fmt.Sprint(r[k]) != v {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// --log-level and --log-format reach the submit process and the
// application master and executors it starts; no record holds a field
// twice.
func TestLogLevelAndFormatReachChildren(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	stdout, stderr, code := runBin(t, marker, 2*time.Minute, "--log-level", "debug", "--log-format", "json",
		"submit", "--master", "local-cluster[2,1,512]", "--conf", "spark.sparkrpc.localCluster.dir="+dir, "--class", "SparkPi", "spark-internal", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 4)
	recs := jsonRecords(t, "submit", stderr)
	if countRecords(recs, map[string]string{"process": "submit", "level": "debug"}) == 0 {
		t.Fatalf("no debug record of the submit process:\n%s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "logs", "application_*", "container_*", "stderr"))
	var all []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, jsonRecords(t, f, string(b))...)
	}
	for _, process := range []string{"applicationmaster", "executor"} {
		if countRecords(all, map[string]string{"process": process, "level": "debug"}) == 0 {
			t.Errorf("no debug JSON record of the %s in the container logs %v", process, files)
		}
	}
}

// Without flags, a successful submit writes no log record: its stderr holds
// the application's reports only. (The UI takes a free port: another driver
// on the machine, such as a test running beside this one, may hold 4040,
// and moving off it is rightly a warning.)
func TestSubmitLogsNothingByDefault(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, time.Minute, "--log-format", "json", "submit", "--master", "local[2]",
		"--conf", "spark.ui.port=0", "--class", "SparkPi", "spark-internal", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkPi(t, stdout, 4)
	if recs := jsonRecords(t, "submit", stderr); len(recs) != 0 {
		t.Fatalf("log records on stderr:\n%s", stderr)
	}
}

func TestBadLogSettingsAreUsageErrors(t *testing.T) {
	marker := newMarker(t)
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{args: []string{"--log-level", "loud", "version"}, want: `invalid log level "loud" in --log-level`},
		{args: []string{"version", "--log-format", "xml"}, want: `invalid log format "xml" in --log-format`},
		{args: []string{"version"}, env: []string{cli.EnvLogLevel + "=verbose"}, want: `invalid log level "verbose" in $SPARKRPC_LOG_LEVEL`},
	} {
		p := startIn(t, marker, t.TempDir(), c.env, c.args...)
		code := p.wait(t, 30*time.Second)
		if code == 0 || !strings.Contains(p.stderr.String(), c.want) || !strings.Contains(p.stderr.String(), "usage: ") {
			t.Errorf("%v %v: exit %d\n%s", c.env, c.args, code, p.stderr)
		}
	}
}
