package webui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

// testTimeout bounds the waits of the tests for what the UIs show.
const testTimeout = 20 * time.Second

// gateTask blocks until the gate named by its payload opens.
const gateTask = "webui.test.gate"

// gates are the gates that gateTask's payloads name.
var gates testutil.Gates

func init() {
	endpoints.RegisterTask(gateTask, func(ctx context.Context, _ endpoints.TaskContext, payload []byte) ([]byte, error) {
		if err := gates.Wait(ctx, string(payload)); err != nil {
			return nil, err
		}
		return []byte("ok"), nil
	})
}

// gatedPayloads returns n payloads of gateTask and the gate that lets them
// finish.
func gatedPayloads(t *testing.T, n int) ([][]byte, *testutil.Gate) {
	key, g := gates.New(t)
	ps := make([][]byte, n)
	for i := range ps {
		ps[i] = []byte(key)
	}
	return ps, g
}

// startCluster starts a driver on a loopback TCP env with executors of
// cores cores each, over real sockets; the test's cleanup stops them.
func startCluster(t *testing.T, executors, cores int) *endpoints.LocalCluster {
	t.Helper()
	log := zerolog.Nop()
	conf := actor.NewConf().Set(endpoints.KeyHeartbeatInterval, "100ms")
	env, err := netty.NewEnv("sparkDriver", conf, netty.WithBindHost("127.0.0.1"), netty.WithPort(0), netty.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{Executors: executors, Cores: cores,
		NewEnv: func(name string, conf *actor.Conf) (*actor.Env, error) {
			return netty.NewEnv(name, conf, netty.WithClientMode(), netty.WithLogger(log))
		}})
	if err != nil {
		_ = env.Shutdown(context.Background())
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
		_ = env.Shutdown(ctx)
	})
	return c
}

// serve serves h on a test server closed by the test's cleanup.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// get fetches url with the optional header "Authorization: Bearer token"
// and returns the status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
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

// getJSON fetches url, checks for 200 and decodes the body into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	code, body := get(t, url, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", url, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

// wantJSONError checks a 404 (or other status) JSON error body.
func wantJSONError(t *testing.T, url string, status int, wantText string) {
	t.Helper()
	code, body := get(t, url, "")
	var e struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}
	if code != status || json.Unmarshal([]byte(body), &e) != nil || e.Status != status || !strings.Contains(e.Error, wantText) {
		t.Fatalf("GET %s = %d %q; want %d with a JSON error containing %q", url, code, body, status, wantText)
	}
}

// runJob runs payloads of task on d in the background; the channel gets
// its error.
func runJob(d *endpoints.Driver, task string, payloads [][]byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := d.RunJob(ctx, task, payloads)
		done <- err
	}()
	return done
}
