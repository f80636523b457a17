package resourcemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/cluster/yarn"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"github.com/sparkrpc/sparkrpc/netty"
	"google.golang.org/protobuf/proto"
)

// authEnv returns a client-mode env that authenticates with secret,
// presenting keyID.
func authEnv(t *testing.T, secret []byte, keyID string) *actor.Env {
	t.Helper()
	conf := actor.NewConf().Set(netty.KeyAuthenticate, "true").Set(netty.KeyAuthenticateSecret, string(secret))
	if keyID != "" {
		conf.Set(netty.KeyAuthenticateKeyID, keyID)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)
	env, err := cluster.TCPNetwork{Logger: &log}.Client("test", conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	return env
}

// With spark.authenticate, the resource manager takes an application
// master's messages only from a connection authenticated with that
// application's secret, and client and node messages only with the
// cluster's: an application's key does not reach further than its
// application.
func TestResourceManagerAuthorisesByKey(t *testing.T) {
	marker := "SPARKRPC_RMAUTH_TEST=" + t.Name()
	t.Cleanup(func() {
		testutil.Eventually(t, 10*time.Second, "no container process left", func() bool { return len(clustertest.MarkedProcesses(marker)) == 0 })
	})
	clusterSecret, _ := cluster.GenerateSecret()
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)
	lc, err := yarn.StartLocalCluster(testutil.Context(t, 20*time.Second), yarn.LocalClusterConfig{Workers: 1, WorkerCores: 2,
		WorkerMemoryMB: 1024, Dir: t.TempDir(), Secret: clusterSecret, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		lc.Shutdown(ctx)
	})
	ctx := testutil.Context(t, 30*time.Second)
	// A peer without the cluster's secret gets nowhere.
	stranger, _ := cluster.GenerateSecret()
	if _, err := rmclient.New(authEnv(t, stranger, ""), lc.Address()).Nodes(ctx); err == nil {
		t.Fatal("a client with another secret listed the nodes")
	}
	clientEnv := authEnv(t, clusterSecret, "")
	client := rmclient.New(clientEnv, lc.Address())
	k, v, _ := strings.Cut(marker, "=")
	submit := func() (string, []byte) {
		secret, _ := cluster.GenerateSecret()
		h, err := client.Submit(ctx, rmclient.Submission{Name: "shell", AMResource: cluster.Resource{MemoryMB: 128, Cores: 1},
			AMCommand: []string{"/bin/sh", "-c", "sleep 60"}, AMEnv: map[string]string{k: v}, AppSecret: secret,
			Conf: map[string]string{"spark.app.name": "shell"}})
		if err != nil {
			t.Fatal(err)
		}
		return h.AppID(), secret
	}
	appA, secretA := submit()
	appB, _ := submit()
	envA := authEnv(t, secretA, appA)
	rmA := envA.RemoteRef(lc.Address(), cluster.ResourceManagerEndpointName)
	for _, tc := range []struct {
		what string
		err  func() error
	}{
		{"the applications", func() error { _, err := rmclient.New(envA, lc.Address()).Applications(ctx); return err }},
		{"a new application", func() error { _, err := rmA.AskSync(ctx, &messages.RmNewApplication{}); return err }},
		{"a kill of another application", func() error { _, err := rmA.AskSync(ctx, &messages.RmKillApplication{AppId: appB}); return err }},
		{"another application's registration", func() error {
			_, err := rmA.AskSync(ctx, &messages.AmRegister{AppId: appB, Host: "127.0.0.1"})
			return err
		}},
		{"staging", func() error {
			_, err := rmA.AskSync(ctx, &messages.RmStageChunk{AppId: appA, Name: "x", Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE})
			return err
		}},
		{"a staged resource", func() error {
			_, err := rmA.AskSync(ctx, &messages.RmFetchResource{AppId: appA, Name: "x"})
			return err
		}},
		{"a node's registration", func() error {
			_, err := rmA.AskSync(ctx, &messages.NmRegister{NodeId: "127.0.0.1:1", Address: "127.0.0.1:1", Host: "127.0.0.1",
				Capability: &messages.RmResource{MemoryMb: 1 << 20, Cores: 64}})
			return err
		}},
		{"a node's unregistration", func() error {
			_, err := rmA.AskSync(ctx, &messages.NmUnregister{NodeId: "127.0.0.1:1"})
			return err
		}},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s with application %s's key: %v, want permission denied", tc.what, appA, err)
		}
	}
	// With the cluster's key, a peer unregisters no node but its own.
	nodes, err := client.Nodes(ctx)
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %v, %v", nodes, err)
	}
	if _, err := clientEnv.RemoteRef(lc.Address(), cluster.ResourceManagerEndpointName).AskSync(ctx,
		&messages.NmUnregister{NodeId: nodes[0].GetNodeId()}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a client's unregistration of node %s: %v, want permission denied", nodes[0].GetNodeId(), err)
	}
	// Nor does it register one again (which would lose its containers) or
	// heartbeat for it (reporting its containers completed).
	var r *rmclient.AppReport
	testutil.Eventually(t, 10*time.Second, "application A's AM container", func() bool {
		r, err = client.Report(ctx, appA)
		return err == nil && r.AMContainerID != ""
	})
	for _, m := range []proto.Message{
		&messages.NmRegister{NodeId: nodes[0].GetNodeId(), Address: nodes[0].GetAddress(), Host: nodes[0].GetHost(),
			Capability: &messages.RmResource{MemoryMb: 1 << 20, Cores: 64}},
		&messages.NmHeartbeat{NodeId: nodes[0].GetNodeId(), Completed: []*messages.RmContainerStatus{{ContainerId: r.AMContainerID, ExitStatus: 1}}},
	} {
		if _, err := clientEnv.RemoteRef(lc.Address(), cluster.ResourceManagerEndpointName).AskSync(ctx, m); err == nil ||
			!strings.Contains(err.Error(), "permission denied") {
			t.Errorf("a client's %T for node %s: %v, want permission denied", m, nodes[0].GetNodeId(), err)
		}
	}
	if nodes, err = client.Nodes(ctx); err != nil || nodes[0].GetState() != "RUNNING" || nodes[0].GetNumContainers() == 0 {
		t.Errorf("after refused node messages: %v, %v; want the node RUNNING with its containers", nodes, err)
	}
	if r, err := client.Report(ctx, appA); err != nil || r.State.Terminal() {
		t.Errorf("after a client's heartbeat for node %s: %+v, %v; want application %s running", nodes[0].GetNodeId(), r, err, appA)
	}
	// An application's master messages with the cluster's key are refused too.
	if _, err := clientEnv.RemoteRef(lc.Address(), cluster.ResourceManagerEndpointName).AskSync(ctx,
		&messages.AmAllocate{AppId: appA}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("an allocation with the cluster's key: %v, want permission denied", err)
	}
	// Its own application's are taken: the AM container runs, so it may register.
	testutil.Eventually(t, 10*time.Second, "application A's AM container", func() bool {
		r, err := client.Report(ctx, appA)
		return err == nil && r.AMContainerID != ""
	})
	if _, err := rmA.AskSync(ctx, &messages.AmRegister{AppId: appA, Host: "127.0.0.1"}); err != nil {
		t.Fatalf("registration with its own key: %v", err)
	}
	// Neither the staging folder nor a node's folder holds a secret.
	for _, secret := range [][]byte{clusterSecret, secretA} {
		filepath.Walk(lc.Dir(), func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				if b, _ := os.ReadFile(path); strings.Contains(string(b), string(secret)) {
					t.Errorf("%s holds a secret", path)
				}
			}
			return nil
		})
	}
}

// The outcome of a container's start is the resource manager's own: a peer
// that reports one (as an ask or a one-way message) does not end an
// application's master.
func TestResourceManagerTakesContainerOutcomesFromItselfOnly(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 2})
	h := mc.SubmitShell(`sleep 60`, cluster.Resource{MemoryMB: 256, Cores: 1})
	var am string
	testutil.Eventually(t, 10*time.Second, "the AM container", func() bool {
		r, err := h.Poll(context.Background())
		am = r.AMContainerID
		return err == nil && am != "" && len(mc.NMs[0].Containers()) == 1
	})
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)
	env, err := actor.NewEnv("rogue", nil, actor.WithTransport(mc.Net.ClientTransport()), actor.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Shutdown(context.Background()) })
	rm := env.RemoteRef(mc.RM.Address(), cluster.ResourceManagerEndpointName)
	fake := &messages.RmContainerStatus{ContainerId: am, State: messages.RmContainerState_RM_CONTAINER_STATE_COMPLETE, ExitStatus: 1,
		Diagnostics: "forged"}
	if _, err := rm.AskSync(testutil.Context(t, 10*time.Second), fake); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("a forged container status: %v, want permission denied", err)
	}
	if err := rm.Send(fake); err != nil {
		t.Fatal(err)
	}
	// Asked after the one-way message, on the same connection: answered after it.
	r, err := actor.AskAs[*messages.RmApplicationReport](testutil.Context(t, 10*time.Second), rm, &messages.RmGetApplicationReport{AppId: h.AppID()})
	if err != nil {
		t.Fatal(err)
	}
	if cluster.AppState(r.GetState()).Terminal() || strings.Contains(r.GetDiagnostics(), "forged") {
		t.Fatalf("a forged status ended the application: %v", r)
	}
}

// With spark.authenticate on, a submission without an application secret is
// refused, and what it staged is removed with it, as with every refused
// submission. Before, that refusal left the staging folder behind.
func TestSubmissionWithoutASecretLeavesNothingStaged(t *testing.T) {
	clusterSecret, _ := cluster.GenerateSecret()
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)
	lc, err := yarn.StartLocalCluster(testutil.Context(t, 20*time.Second), yarn.LocalClusterConfig{Workers: 1, WorkerCores: 2,
		WorkerMemoryMB: 1024, Dir: t.TempDir(), Secret: clusterSecret, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		lc.Shutdown(ctx)
	})
	data := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(data, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := rmclient.New(authEnv(t, clusterSecret, ""), lc.Address())
	_, err = client.Submit(testutil.Context(t, 10*time.Second), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 128, Cores: 1},
		AMCommand: []string{"/bin/true"}, Files: []string{data}})
	if err == nil || !strings.Contains(err.Error(), "has no secret") {
		t.Fatalf("a submission without an application secret: %v, want it refused", err)
	}
	if ents, err := os.ReadDir(lc.ResourceManager().StagingDir()); err != nil || len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("staging folders left by the refused submission: %v (%v)", names, err)
	}
}
