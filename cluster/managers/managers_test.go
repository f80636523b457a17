package managers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes"
	"github.com/sparkrpc/sparkrpc/cluster/local"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/cluster/yarn"
	"github.com/sparkrpc/sparkrpc/webui"
	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine is still running after every
// test has finished.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Each master goes to exactly one of the shipped cluster managers, the one
// that runs it.
func TestEachMasterHasOneManager(t *testing.T) {
	for _, tc := range []struct {
		master string
		want   cluster.ClusterManager
	}{
		{"local", local.Manager{}},
		{"local[4]", local.Manager{}},
		{"local-cluster[2,1,512]", yarn.Manager{}},
		{"rm://127.0.0.1:8032", yarn.Manager{}},
		{"k8s://https://127.0.0.1:6443", kubernetes.Manager{}},
	} {
		m, err := cluster.ParseMaster(tc.master)
		if err != nil {
			t.Fatal(err)
		}
		var accepting []cluster.ClusterManager
		for _, cm := range managers.All() {
			if cm.Accepts(m) {
				accepting = append(accepting, cm)
			}
		}
		if len(accepting) != 1 || fmt.Sprintf("%T", accepting[0]) != fmt.Sprintf("%T", tc.want) {
			t.Errorf("%s: accepted by %T, want only %T", tc.master, accepting, tc.want)
		}
	}
}

// The applications these tests submit, registered once per process as a
// program registers its own (a test's second run, -count, must not
// register them again).
func init() {
	nothing := func(context.Context, *cluster.AppContext, []string) error { return nil }
	cluster.RegisterApp("managers.TestApp", nothing)
	cluster.RegisterApp("managers.test.Nothing", nothing)
}

// A master no manager in the list accepts is ErrInvalidMaster, before
// anything runs.
func TestSubmitWithoutAManagerForTheMaster(t *testing.T) {
	m, err := cluster.ParseMaster("rm://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	err = cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp"}, local.Manager{})
	if !errors.Is(err, cluster.ErrInvalidMaster) {
		t.Fatalf("Submit to rm:// with local.Manager only: %v, want ErrInvalidMaster", err)
	}
}

// Submit refuses to run in a container that a cluster started for a role
// (a node manager's, or a Kubernetes pod), and an embedded cluster refuses
// a submission that names no program for its containers: a plain main that
// submits would otherwise be started again by its own containers.
func TestSubmitRefusesWhatWouldSubmitWithoutEnd(t *testing.T) {
	m, err := cluster.ParseMaster("local-cluster[1,1,512]")
	if err != nil {
		t.Fatal(err)
	}
	cfg := cluster.SubmitConfig{Master: m, Class: "managers.test.Nothing"}
	for _, key := range []string{cluster.EnvContainerAppID, cluster.EnvPodAppID} {
		t.Run(key, func(t *testing.T) {
			t.Setenv(key, "application_1_0001")
			if err := managers.Submit(context.Background(), cfg); !errors.Is(err, cluster.ErrInContainer) {
				t.Fatalf("Submit in a container: %v", err)
			}
		})
	}
	if err := managers.Submit(context.Background(), cfg); !errors.Is(err, cluster.ErrNoProgram) {
		t.Fatalf("Submit on an embedded cluster without a program: %v", err)
	}
}

// countingManager accepts every master and counts the submissions it is
// given.
type countingManager struct{ submitted *int }

func (countingManager) Accepts(cluster.Master) bool { return true }

func (m countingManager) Submit(context.Context, cluster.SubmitConfig, cluster.AppFunc) error {
	*m.submitted++
	return nil
}

// A malformed key of the driver's UI fails the submission before any
// cluster manager runs it, with the key named: the application does not
// start and then run without its UI.
func TestSubmitRefusesMalformedUIKeys(t *testing.T) {
	m, err := cluster.ParseMaster("local[1]")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value string }{
		{"spark.ui.enabled", "maybe"},
		{"spark.ui.port", "abc"},
		{"spark.ui.port", "70000"},
		{"spark.ui.port", "-2"},
		{"spark.port.maxRetries", "-3"},
	} {
		conf := actor.NewConf()
		conf.Set(tc.key, tc.value)
		submitted := 0
		err := cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp", Conf: conf},
			countingManager{&submitted})
		if err == nil || !strings.Contains(err.Error(), tc.key) || submitted != 0 {
			t.Errorf("%s=%s: Submit = %v after %d submissions, want an error naming the key and none", tc.key, tc.value, err, submitted)
		}
	}
	// A free port is a port, and the port of a UI that is off is not checked.
	for _, kv := range [][]string{{"spark.ui.port", "0"}, {"spark.ui.enabled", "false", "spark.ui.port", "-1"}} {
		submitted := 0
		conf := actor.NewConf()
		for i := 0; i < len(kv); i += 2 {
			conf.Set(kv[i], kv[i+1])
		}
		if err := cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.TestApp", Conf: conf},
			countingManager{&submitted}); err != nil || submitted != 1 {
			t.Fatalf("%v: Submit = %v after %d submissions, want nil and 1", kv, err, submitted)
		}
	}
}

// The REST API of a local application's UI gives its sparkrpc version, as
// every other master's does.
func TestLocalUIGivesTheVersion(t *testing.T) {
	m, err := cluster.ParseMaster("local[2]")
	if err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf()
	conf.Set("spark.ui.port", "0")
	var version, env string
	err = cluster.Submit(context.Background(), cluster.SubmitConfig{Master: m, Class: "managers.test.UIVersion", Conf: conf,
		Logger: zerolog.Nop()}, local.Manager{})
	if err != nil {
		t.Fatal(err)
	}
	uiVersion.Lock()
	version, env = uiVersion.app, uiVersion.env
	uiVersion.Unlock()
	if version == "" || env == "" {
		t.Fatalf("appSparkVersion %q, sparkrpcVersion %q: want both set", version, env)
	}
}

// uiVersion is what the managers.test.UIVersion application read from its
// own UI's REST API.
var uiVersion struct {
	sync.Mutex
	app, env string
}

func init() {
	cluster.RegisterApp("managers.test.UIVersion", func(ctx context.Context, sc *cluster.AppContext, _ []string) error {
		d, err := sc.Driver(ctx)
		if err != nil {
			return err
		}
		base := d.Env().Conf().Get(webui.KeyDriverUIAddress, "")
		if base == "" {
			return errors.New("the driver's UI did not start")
		}
		var apps []struct {
			Attempts []struct {
				AppSparkVersion string `json:"appSparkVersion"`
			} `json:"attempts"`
		}
		if err := getJSON(ctx, base+"/api/v1/applications", &apps); err != nil {
			return err
		}
		var envInfo struct {
			Runtime struct {
				SparkrpcVersion string `json:"sparkrpcVersion"`
			} `json:"runtime"`
		}
		if err := getJSON(ctx, base+"/api/v1/applications/"+sc.AppID()+"/environment", &envInfo); err != nil {
			return err
		}
		if len(apps) != 1 || len(apps[0].Attempts) != 1 {
			return fmt.Errorf("applications = %+v", apps)
		}
		uiVersion.Lock()
		uiVersion.app, uiVersion.env = apps[0].Attempts[0].AppSparkVersion, envInfo.Runtime.SparkrpcVersion
		uiVersion.Unlock()
		return nil
	})
}

// getJSON decodes the JSON body of GET url into v.
func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
