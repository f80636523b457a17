package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// /executors/logs/?start=-9223372036854775808 asks the reader for the log's
// last MaxExecutorLogBytes at most and answers. Before, -start overflowed:
// the handler handed the reader a negative limit, sliced the answer with
// it and panicked.
func TestExecutorLogOfTheMostNegativeStart(t *testing.T) {
	var asked []int
	o := buildOptions([]Option{WithExecutorLogs(func(_ context.Context, _ string, _ int64, limit int) ([]byte, error) {
		asked = append(asked, limit)
		return []byte("the log's tail\n"), nil
	})})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/executors/logs/?id=1&start=-9223372036854775808", nil)
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("GET %s panicked: %v (limit handed to the reader: %v)", req.URL, v, asked)
			}
		}()
		o.executorLog(rec, req)
	}()
	for _, l := range asked {
		if l < 0 || l > MaxExecutorLogBytes {
			t.Fatalf("the reader was asked for %d bytes", l)
		}
	}
	if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d: %s", rec.Code, fmt.Sprint(rec.Body))
	}
}
