package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// trackingRe finds the tracking URL that submit and --status print.
var trackingRe = regexp.MustCompile(`tracking URL: (http://\S+)`)

// httpGet fetches url (no keep-alive) and returns the status and body.
func httpGet(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// uiURL waits for "NAME web UI at URL" in p's stdout and returns URL.
func uiURL(t *testing.T, p *proc, name string) string {
	t.Helper()
	re := regexp.MustCompile(name + ` web UI at (http://\S+)`)
	var url string
	testutil.Eventually(t, 30*time.Second, name+"'s web UI", func() bool {
		m := re.FindStringSubmatch(p.stdout.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return url
}

// The resource manager and node managers serve their pages and API on
// --webui-port.
func TestDaemonWebUIs(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "1g", "--cores", "2"})
	rm, nm := uiURL(t, c.rm, "ResourceManager"), uiURL(t, c.nms[0], "NodeManager")
	if code, body := httpGet(t, rm+"/api/v1/applications"); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("RM applications = %d %q", code, body)
	}
	if code, body := httpGet(t, rm+"/cluster/nodes"); code != 200 || !strings.Contains(body, "1 GB") || !strings.Contains(body, `class="node"`) {
		t.Fatalf("RM nodes = %d\n%s", code, body)
	}
	// /metrics: the daemon's sparkrpc_ metrics beside the Go runtime's.
	for _, m := range []struct{ url, want string }{{rm, "sparkrpc_rm_nodes{"}, {nm, "sparkrpc_nm_containers_running "}} {
		code, body := httpGet(t, m.url+"/metrics")
		if code != 200 || !strings.Contains(body, m.want) || !strings.Contains(body, "go_goroutines ") ||
			!strings.Contains(body, "sparkrpc_connections_open ") {
			t.Fatalf("GET %s/metrics = %d, want %q, go_goroutines and the transport's metrics:\n%s", m.url, code, m.want, body)
		}
	}
	if code, body := httpGet(t, nm+"/"); code != 200 || !strings.Contains(body, "No containers running.") {
		t.Fatalf("NM page = %d\n%s", code, body)
	}
	c.stop(t)
}

// With spark.authenticate on, the resource manager's UI wants the secret.
func TestDaemonWebUIAuth(t *testing.T) {
	marker := newMarker(t)
	// The secret from the environment: a command line may not carry it.
	rm := startIn(t, marker, t.TempDir(), []string{cli.EnvAuthSecret + "=s3cret"}, "resourcemanager", "--port", "0", "--webui-port", "0",
		"--conf", "spark.authenticate=true")
	url := uiURL(t, rm, "ResourceManager")
	if code, body := httpGet(t, url+"/api/v1/applications"); code != 401 || !strings.Contains(body, "Authorization: Bearer") {
		t.Fatalf("without the secret: %d %q", code, body)
	}
	if code, body := httpGet(t, url+"/api/v1/applications", "Authorization", "Bearer s3cret"); code != 200 {
		t.Fatalf("with the secret: %d %q", code, body)
	}
	// A bad --webui-port is a usage error.
	if _, stderr, code := runBin(t, marker, 30*time.Second, "resourcemanager", "--port", "0", "--webui-port", "70000"); code != 1 || !strings.Contains(stderr, "--webui-port must be between 0 and 65535") {
		t.Fatalf("--webui-port 70000: exit %d %s", code, stderr)
	}
}

// submit prints the tracking URL in local mode, the driver's UI; none with
// spark.ui.enabled=false.
func TestSubmitLocalTrackingURL(t *testing.T) {
	marker := newMarker(t)
	stdout, stderr, code := runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--conf", "spark.ui.port=0", "--class", "SparkPi", "spark-internal", "4")
	if code != 0 || !regexp.MustCompile(`(?m)^tracking URL: http://127\.0\.0\.1:\d+$`).MatchString(stderr) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runBin(t, marker, time.Minute, "submit", "--master", "local[2]", "--conf", "spark.ui.enabled=false", "--class", "SparkPi", "spark-internal", "4")
	if code != 0 || strings.Contains(stderr, "tracking URL") || piOf(t, stdout) == "" {
		t.Fatalf("with spark.ui.enabled=false: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
