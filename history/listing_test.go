package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/history"
	"github.com/sparkrpc/sparkrpc/webui"
)

// A log whose application start comes after a long environment update, as
// Spark writes them, is listed under its application's id and attempt, and
// its pages answer there. Before, it was listed under its file's name (the
// listing looks at a log's first lines), and its REST API said "unknown app".
func TestASparkOrderedLogIsListedUnderItsApplicationsID(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Add(-time.Hour).UnixMilli()
	classpath := strings.Repeat("/opt/spark/jars/some-library-1.2.3.jar:", 2000)
	log := fmt.Sprintf(`{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}
{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{"spark.app.name":"pi"},"Runtime Information":{"Java Version":"17"},"System Properties":{"java.class.path":%q}}
{"Event":"SparkListenerApplicationStart","App Name":"pi","App ID":"application_1700000000000_0001","Timestamp":%d,"User":"u","App Attempt ID":"1"}
{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":%d,"Number of Tasks":1}
{"Event":"SparkListenerApplicationEnd","Timestamp":%d}
`, classpath, now, now, now+1000)
	if err := os.WriteFile(filepath.Join(dir, "application_1700000000000_0001_1"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	_, hs := historyServer(t, dir)
	var apps []webui.ApplicationInfo
	getJSON(t, hs.URL+"/api/v1/applications", &apps)
	if len(apps) != 1 || len(apps[0].Attempts) != 1 {
		t.Fatalf("applications = %+v", apps)
	}
	if id, attempt := apps[0].ID, apps[0].Attempts[0].AttemptID; id != "application_1700000000000_0001" || attempt != "1" {
		t.Fatalf("listed as %q, attempt %q", id, attempt)
	}
	if code, body := get(t, hs.URL+"/api/v1/applications/"+apps[0].ID+"/jobs"); code != 200 {
		t.Fatalf("its jobs: %d %s", code, body)
	}
}

// Of two logs of one application with the same modification time, the list
// and the pages show the same one, every time. Before, each picked
// whichever a map gave first.
func TestTwoLogsOfOneTimeShowOneRun(t *testing.T) {
	dir := t.TempDir()
	when := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, name := range []string{"first", "second"} {
		line := fmt.Sprintf("{\"Event\":\"SparkListenerApplicationStart\",\"App ID\":\"app-tie\",\"App Name\":%q,\"Timestamp\":%d}\n"+
			"{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":%d}\n", name, when.UnixMilli(), when.UnixMilli()+1)
		p := filepath.Join(dir, "app-tie-"+name)
		if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 2, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := map[string]bool{}
	for range 50 {
		listed := p.Applications()[0].Name
		s, _, err := p.Store("app-tie")
		if err != nil {
			t.Fatal(err)
		}
		if shown := s.Info().Name; shown != listed {
			t.Fatalf("the list names run %q, its pages show run %q", listed, shown)
		}
		seen[listed] = true
	}
	if len(seen) != 1 || !seen["second"] {
		t.Fatalf("the list named %v; want the run of the later path, second, every time", seen)
	}
}
