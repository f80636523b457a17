package rmclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/clustertest"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Resources names the program __app__ and each file by its base name, and
// refuses what could not be staged as asked.
func TestResources(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"prog", "a/data.txt", "b/data.txt", "b/other"} {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(p string) string { return filepath.Join(dir, p) }
	got, err := rmclient.Resources(in("prog"), []string{in("a/data.txt"), in("b/other")})
	want := []rmclient.Resource{{Name: "__app__", Kind: messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM, Path: in("prog")},
		{Name: "data.txt", Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE, Path: in("a/data.txt")},
		{Name: "other", Kind: messages.RmResourceKind_RM_RESOURCE_KIND_FILE, Path: in("b/other")}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("Resources: %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("resource %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got, err := rmclient.Resources("", nil); err != nil || len(got) != 0 {
		t.Errorf("no program, no files: %v, %v", got, err)
	}
	for _, tc := range []struct {
		name    string
		program string
		files   []string
		want    string
	}{
		{"one base name twice", "", []string{in("a/data.txt"), in("b/data.txt")}, "would both be staged as \"data.txt\""},
		{"a missing file", "", []string{in("nope")}, "no such file"},
		{"a folder", "", []string{in("a")}, "not a regular file"},
		{"a file named as the program", in("prog"), []string{in("__app__")}, "invalid file resource id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rmclient.Resources(tc.program, tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// Two files with one base name are a configuration error before anything
// is sent: the resource manager has no new application.
func TestSubmitRefusesFilesWithOneNameBeforeSending(t *testing.T) {
	mc := clustertest.NewMemCluster(t, cluster.Resource{MemoryMB: 1024, Cores: 1})
	dir := t.TempDir()
	var files []string
	for _, d := range []string{"one", "two"} {
		p := filepath.Join(dir, d, "conf.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	ctx := testutil.Context(t, 10*time.Second)
	_, err := mc.Client.Submit(ctx, rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 256, Cores: 1},
		AMCommand: []string{"/bin/true"}, Files: files})
	var dup *cluster.DuplicateResourceError
	if !errors.As(err, &dup) || !errors.Is(err, cluster.ErrDuplicateResource) || !errors.Is(err, cluster.ErrInvalidConfig) || dup.Name != "conf.json" {
		t.Fatalf("err = %v", err)
	}
	if apps, err := mc.Client.Applications(ctx); err != nil || len(apps) != 0 {
		t.Fatalf("applications after a refused submission: %v, %v", apps, err)
	}
}

// A submission whose staging fails is killed: nothing of it stays staged,
// and its report says why.
func TestFailedStagingKillsTheApplication(t *testing.T) {
	net := actor.NewMemNetwork()
	newEnv := func(name string, port int, conf *actor.Conf) *actor.Env {
		tr := net.ClientTransport()
		if port != 0 {
			tr = net.Transport("127.0.0.1", port)
		}
		env, err := actor.NewEnv(name, conf, actor.WithTransport(tr), actor.WithLogger(zerolog.Nop()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		return env
	}
	staging := t.TempDir()
	rm, err := resourcemanager.Start(newEnv("rm", 1, actor.NewConf().Set(cluster.KeyStagingMaxAppSize, "3k")),
		resourcemanager.Config{StagingDir: staging})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	ctx := testutil.Context(t, 10*time.Second)
	// A node, so that the AM fits; the submission never gets that far.
	if _, err := newEnv("node", 2, nil).RemoteRef(rm.Address(), cluster.ResourceManagerEndpointName).AskSync(ctx,
		&messages.NmRegister{NodeId: "127.0.0.1:2", Address: "127.0.0.1:2", Host: "127.0.0.1", Capability: &messages.RmResource{MemoryMb: 1024, Cores: 1}}); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, name := range []string{"a", "b"} {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(strings.Repeat(name, 2000)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	client := rmclient.New(newEnv("client", 0, nil), rm.Address())
	_, err = client.Submit(ctx, rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 256, Cores: 1}, AMCommand: []string{"/bin/true"}, Files: files})
	if !cluster.RemoteIs(err, cluster.ErrStagingLimit) {
		t.Fatalf("err = %v, want the staging limit", err)
	}
	apps, err := client.Applications(ctx)
	if err != nil || len(apps) != 1 || apps[0].State != cluster.StateKilled || !strings.Contains(apps[0].Diagnostics, "staging its resources failed") {
		t.Fatalf("applications: %+v, %v", apps, err)
	}
	if ents, _ := os.ReadDir(staging); len(ents) != 0 {
		t.Fatalf("left in the staging folder: %v", ents)
	}
}
