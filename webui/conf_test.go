package webui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/webui"
)

// StartDriverUI follows spark.ui.enabled and spark.ui.port (moving up from
// a busy one) and publishes its URL in spark.driver.appUIAddress.
func TestStartDriverUI(t *testing.T) {
	c := startCluster(t, 1, 1)
	conf := c.Driver.Env().Conf()
	app := webui.AppInfo{ID: testApp}

	conf.Set(webui.KeyUIEnabled, "false")
	s, err := webui.StartDriverUI(c.Driver, app, "127.0.0.1", "", zerolog.Nop())
	if s != nil || err != nil {
		t.Fatalf("with spark.ui.enabled=false: %v, %v; want no UI", s, err)
	}
	if _, ok := conf.Lookup(webui.KeyDriverUIAddress); ok {
		t.Fatal("spark.driver.appUIAddress set without a UI")
	}

	port := busyPorts(t, 1)
	conf.Set(webui.KeyUIEnabled, "true").Set(webui.KeyUIPort, fmt.Sprint(port))
	s, err = webui.StartDriverUI(c.Driver, app, "127.0.0.1", "", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}()
	if s.Port() <= port {
		t.Fatalf("bound %d; want above the busy %d", s.Port(), port)
	}
	if got := conf.Get(webui.KeyDriverUIAddress, ""); got != s.URL() {
		t.Fatalf("spark.driver.appUIAddress = %q, want %q", got, s.URL())
	}
	code, body := get(t, s.URL()+"/api/v1/applications", "")
	if code != 200 || !strings.Contains(body, testApp) {
		t.Fatalf("GET applications = %d %s", code, body)
	}

	conf.Set(webui.KeyUIPort, "x")
	if _, err := webui.StartDriverUI(c.Driver, app, "127.0.0.1", "", zerolog.Nop()); err == nil || !strings.Contains(err.Error(), webui.KeyUIPort) {
		t.Fatalf("spark.ui.port=x: %v; want an error naming the key", err)
	}
}
