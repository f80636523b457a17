package endpoints_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

func init() {
	// test.readfile returns its executor's id and the contents of the
	// added file its payload names, read where the executor fetched it.
	endpoints.RegisterTask("test.readfile", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		b, err := os.ReadFile(tc.File(string(p)))
		return []byte(tc.ExecutorID + ":" + string(b)), err
	})
}

// A file the driver adds reaches every executor before the tasks of the
// jobs submitted after it, under its base name in the executor's files
// folder (Spark's SparkContext.addFile and SparkFiles.get).
func TestAddFileReachesEveryExecutor(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		env := nw.driverEnv(t, testConf())
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		// Each executor fetches into a folder of its own (the default).
		lc, err := endpoints.StartLocalCluster(ctx, env, endpoints.LocalClusterConfig{Executors: 2, Cores: 2, NewEnv: nw.factory})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := lc.Stop(ctx); err != nil {
				t.Error(err)
			}
			if err := env.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		}()
		src := t.TempDir()
		first := filepath.Join(src, "first file.txt")
		if err := os.WriteFile(first, []byte("one"), 0o600); err != nil {
			t.Fatal(err)
		}
		// Before AddFile, no task finds it.
		if _, err := lc.Driver.RunJob(ctx, "test.readfile", [][]byte{[]byte("first file.txt")}); err == nil {
			t.Fatal("a task read a file that was never added")
		}
		uri, err := lc.Driver.AddFile(first)
		if err != nil || !strings.HasPrefix(uri, "spark://") || !strings.HasSuffix(uri, "/files/first%20file.txt") {
			t.Fatalf("AddFile = %q, %v", uri, err)
		}
		if again, err := lc.Driver.AddFile(first); err != nil || again != uri {
			t.Fatalf("adding the same file again: %q, %v", again, err)
		}
		payloads := make([][]byte, 8)
		for i := range payloads {
			payloads[i] = []byte("first file.txt")
		}
		res, err := lc.Driver.RunJob(ctx, "test.readfile", payloads)
		if err != nil {
			t.Fatal(err)
		}
		readers := map[string]bool{}
		for i, r := range res {
			id, contents, _ := strings.Cut(string(r), ":")
			if contents != "one" {
				t.Fatalf("partition %d read %q", i, r)
			}
			readers[id] = true
		}
		if len(readers) != 2 {
			t.Fatalf("the file was read on executors %v, want both", readers)
		}
		if got := lc.Driver.Files(); len(got) != 1 || got[0] != uri {
			t.Fatalf("Files() = %q", got)
		}
		// A file added but gone from the driver's disk fails the tasks
		// that need it, with its URI named.
		second := filepath.Join(src, "second.txt")
		if err := os.WriteFile(second, []byte("two"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := lc.Driver.AddFile(second); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(second); err != nil {
			t.Fatal(err)
		}
		_, err = lc.Driver.RunJob(ctx, "test.readfile", [][]byte{[]byte("first file.txt")})
		var ja *endpoints.JobAbortedError
		if !errors.As(err, &ja) || !strings.Contains(err.Error(), "fetching the added file") || !strings.Contains(err.Error(), "second.txt") {
			t.Fatalf("a job after a file vanished: %v", err)
		}
	})
}
