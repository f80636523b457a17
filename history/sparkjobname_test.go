package history_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A job of a Spark-written log is named as Spark names it, after its last
// stage ("reduce at SparkPi.scala:38"), on the jobs page and in the REST
// API. Before, Spark's JobStart has no task name, and every job of such a
// log showed an empty name.
func TestASparkWrittenJobIsNamedAfterItsLastStage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "local-1700000000000"), []byte(sparkWrittenLog), 0o600); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	var jobs []jobFigures
	getJSON(t, hs.URL+"/api/v1/applications/local-1700000000000/jobs", &jobs)
	const want = "reduce at SparkPi.scala:38"
	if len(jobs) != 1 || jobs[0].Name != want {
		t.Fatalf("jobs = %+v; want one named %q", jobs, want)
	}
	if code, body := get(t, hs.URL+"/history/local-1700000000000/jobs/"); code != 200 || !strings.Contains(body, want) {
		t.Fatalf("jobs page = %d; want the job's name %q:\n%s", code, want, body)
	}
}
