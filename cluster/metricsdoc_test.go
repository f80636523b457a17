package cluster_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// documentedMetrics returns the metric names docs/metrics.md lists, with
// its "`NAME_used_X` / `_free_X`" shorthand expanded.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile("`(sparkrpc_[a-z_]+)`(?: / `(_[a-z_]+)`)?").FindAllStringSubmatch(string(b), -1) {
		names[m[1]] = true
		if m[2] != "" {
			if i := strings.LastIndex(m[1], "_used"); i >= 0 {
				names[m[1][:i]+m[2]] = true
			}
		}
	}
	return names
}

// README: "The metric names, their labels and what they cost:
// docs/metrics.md". Every sparkrpc_* family a resource manager's or a node
// manager's /metrics serves is named there, so that an operator can find
// what it means. Before, the node manager's two localization counters
// were not.
func TestDaemonMetricsAreDocumented(t *testing.T) {
	documented := documentedMetrics(t)
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 4})
	for who, m := range map[string]testutil.Metrics{
		"resource manager": testutil.Scrape(t, mc.RM.MetricsHandler()),
		"node manager":     testutil.Scrape(t, mc.NMs[0].MetricsHandler()),
	} {
		for _, name := range m.Names() {
			if strings.HasPrefix(name, "sparkrpc_") && !documented[name] {
				t.Errorf("the %s serves %s, which docs/metrics.md does not list", who, name)
			}
		}
	}
}
