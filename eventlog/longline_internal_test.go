package eventlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A line longer than the cap is skipped to its end and reported, and the
// lines after it are read: the reader never holds more than the cap.
func TestALineOverTheCapIsSkippedAndReported(t *testing.T) {
	p := filepath.Join(t.TempDir(), "app-1")
	long := `{"Event":"SparkListenerApplicationEnd","Error":"` + strings.Repeat("x", 5000) + `"}`
	body := `{"Event":"SparkListenerApplicationStart","App ID":"app-1"}` + "\n" + long + "\n" +
		`{"Event":"SparkListenerApplicationEnd","Timestamp":5}` + "\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	lg := Open(p)
	lg.maxLine = 1000
	var evs []endpoints.Event
	res, err := lg.Update(endpoints.ListenerFunc(func(ev endpoints.Event) { evs = append(evs, ev) }))
	if err != nil || res.Events != 2 || res.Skipped != 1 || len(res.Problems) != 1 || res.Problems[0].Line != 2 ||
		!errors.Is(res.Problems[0].Err, ErrLineTooLong) {
		t.Fatalf("Update = %+v, %v; want 2 events and line 2 skipped as too long", res, err)
	}
	if _, ok := evs[1].(endpoints.ApplicationEnd); !ok || lg.offset != int64(len(body)) {
		t.Fatalf("events %#v, offset %d of %d", evs, lg.offset, len(body))
	}
}
