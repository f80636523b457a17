package testutil

// scrape.go holds Scrape and Metrics: a /metrics handler read over HTTP as
// Prometheus reads it, and the values it served.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics are the metric families of one scrape, by name.
type Metrics map[string]*dto.MetricFamily

// Scrape serves h on a loopback HTTP server, GETs /metrics in Prometheus'
// text format and parses what it served; it fails t on any error.
func Scrape(t testing.TB, h http.Handler) Metrics {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading /metrics: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s: %s", resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// Value returns the value of the counter, gauge or untyped sample of the
// family name whose labels include labels (name, value pairs), and whether
// there is one. For a histogram it returns the sample count.
func (m Metrics) Value(name string, labels ...string) (float64, bool) {
	f := m[name]
	if f == nil {
		return 0, false
	}
	for _, s := range f.GetMetric() {
		if !hasLabels(s, labels) {
			continue
		}
		switch {
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Histogram != nil:
			return float64(s.GetHistogram().GetSampleCount()), true
		case s.Untyped != nil:
			return s.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// Get is Value that fails t when there is no such sample.
func (m Metrics) Get(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	v, ok := m.Value(name, labels...)
	if !ok {
		t.Fatalf("no sample %s%v in the scrape; families: %v", name, labels, m.Names())
	}
	return v
}

// Names returns the metric names of the scrape, sorted.
func (m Metrics) Names() []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func hasLabels(s *dto.Metric, labels []string) bool {
	if len(labels)%2 != 0 {
		panic(fmt.Sprintf("odd label list %q", labels))
	}
	for i := 0; i < len(labels); i += 2 {
		found := false
		for _, l := range s.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
