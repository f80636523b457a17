package yarn

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/webui"
)

// With NodeUIs, each node manager of a local cluster serves its UI on
// loopback, and with a Secret only to requests that carry it.
func TestLocalClusterNodeUIsTakeTheSecret(t *testing.T) {
	secret := "0123456789abcdef-node-ui-secret"
	lc, err := StartLocalCluster(testutil.Context(t, 20*time.Second), LocalClusterConfig{Workers: 2, WorkerCores: 1,
		WorkerMemoryMB: 512, Dir: t.TempDir(), Secret: []byte(secret), NodeUIs: true, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := lc.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	urls := lc.NodeUIs()
	if len(urls) != len(lc.NodeManagers()) || len(urls) != 2 {
		t.Fatalf("node UIs %v for %d node managers, want one each", urls, len(lc.NodeManagers()))
	}
	get := func(url, auth string) int {
		req, err := http.NewRequest(http.MethodGet, url+"/api/v1/containers", nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	for _, u := range urls {
		if code := get(u, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the secret = %d, want 401", u, code)
		}
		if code := get(u, "Bearer "+secret); code != http.StatusOK {
			t.Errorf("GET %s with the secret = %d, want 200", u, code)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// The node UIs go with the driver's: spark.ui.enabled=false starts none.
func TestLocalClusterNodeUIsFollowTheUIKey(t *testing.T) {
	m, err := cluster.ParseMaster("local-cluster[2,1,512]")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", true}, {"true", true}, {"false", false}} {
		conf := actor.NewConf()
		if tc.value != "" {
			conf.Set(webui.KeyUIEnabled, tc.value)
		}
		lcc, err := localClusterConfig(cluster.SubmitConfig{Conf: conf, Master: m}, "/bin/true", "client")
		if err != nil {
			t.Fatal(err)
		}
		if lcc.NodeUIs != tc.want {
			t.Errorf("spark.ui.enabled=%q: NodeUIs %v, want %v", tc.value, lcc.NodeUIs, tc.want)
		}
	}
	conf := actor.NewConf().Set(webui.KeyUIEnabled, "sometimes")
	if _, err := localClusterConfig(cluster.SubmitConfig{Conf: conf, Master: m}, "/bin/true", "client"); err == nil {
		t.Error("spark.ui.enabled=sometimes was taken")
	}
}
