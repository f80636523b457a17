package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/managers"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/netty"
)

type lockedBuffer = testutil.SyncBuffer

// duplicateKeys returns the top-level keys that occur more than once in the
// JSON object line.
func duplicateKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %s", line)
	}
	seen := map[string]bool{}
	var dups []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if seen[key] {
			dups = append(dups, key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
	}
	return dups, nil
}

// checkNoDuplicateFields fails the test for every JSON record of out that
// holds a field twice, and returns the number of records.
func checkNoDuplicateFields(t *testing.T, out string) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		n++
		dups, err := duplicateKeys(line)
		if err != nil {
			t.Errorf("%v", err)
		} else if len(dups) > 0 {
			t.Errorf("fields %v appear twice in %s", dups, line)
		}
	}
	return n
}

// runLibraryWithoutLoggers brings up every logging part of the library the
// way an embedding program would without asking for logs: listening and
// client netty envs, a resource manager and a node manager on them, a
// driver, an executor that cannot reach its driver, and a job on local[2].
// With log set, it is given to the envs (not to the components) and to
// Submit.
func runLibraryWithoutLoggers(t *testing.T, log *zerolog.Logger) {
	t.Helper()
	var envOpts []netty.Option
	var submitLog zerolog.Logger
	if log != nil {
		envOpts = append(envOpts, netty.WithEnvOptions(actor.WithLogger(*log)))
		submitLog = *log
	}
	listen := func(name string) *actor.Env {
		env, err := netty.NewEnv(name, nil, append([]netty.Option{netty.WithBindHost("127.0.0.1"), netty.WithPort(0)}, envOpts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		return env
	}
	rmEnv := listen("rm")
	rm, err := resourcemanager.Start(rmEnv, resourcemanager.Config{StagingDir: t.TempDir(), NodeExpiry: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	nm, err := nodemanager.Start(testutil.Context(t, 30*time.Second), listen("nm"), nodemanager.Config{ResourceManager: rm.Address(),
		Capability: cluster.Resource{MemoryMB: 1024, Cores: 1}, Dir: filepath.Join(t.TempDir(), "node"), HeartbeatInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Shutdown(context.Background()) })
	driverEnv := listen("driver")
	d, err := endpoints.NewDriver(driverEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop(context.Background()) })
	// An executor whose driver URL names an endpoint that does not exist: it
	// logs its attempts and gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = endpoints.RunExecutor(ctx, endpoints.ExecutorConfig{DriverURL: "spark://NoSuchScheduler@" + rmEnv.Address().HostPort(),
		ExecutorID: "1", Hostname: "127.0.0.1", Cores: 1, AppID: "app"},
		endpoints.WithEnvFactory(func(name string, conf *actor.Conf) (*actor.Env, error) {
			return netty.NewEnv(name, conf, append([]netty.Option{netty.WithClientMode()}, envOpts...)...)
		}))
	master, err := cluster.ParseMaster("local[2]")
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := managers.Submit(testutil.Context(t, time.Minute), cluster.SubmitConfig{Master: master, Class: "example.SumOfSquares",
		Conf: actor.NewConf(), Stdout: &stdout, Stderr: io.Discard, Logger: submitLog}); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "sum of squares: 30\n" {
		t.Fatalf("the application printed %q", stdout.String())
	}
}

// Library code logs nothing unless the embedding program gives it a
// logger: no JSON on stderr. Run in a child process, whose stderr is
// checked whole.
func TestLibraryLogsNothingByDefault(t *testing.T) {
	if os.Getenv("SPARKRPC_QUIET_LIBRARY_CHILD") == "1" {
		runLibraryWithoutLoggers(t, nil)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLibraryLogsNothingByDefault$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SPARKRPC_QUIET_LIBRARY_CHILD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "PASS") {
		t.Fatalf("child did not pass:\n%s", stdout.String())
	}
	if stderr.Len() != 0 {
		t.Fatalf("the library wrote to stderr without being given a logger:\n%s", stderr.String())
	}
}

// No log record holds a field twice: a component built on an env's logger
// adds its own component field instead of a second one.
func TestLogRecordsHaveNoDuplicateFields(t *testing.T) {
	var buf lockedBuffer
	log := zerolog.New(&buf).Level(zerolog.TraceLevel).With().Timestamp().Logger()
	runLibraryWithoutLoggers(t, &log)
	if n := checkNoDuplicateFields(t, buf.String()); n < 10 {
		t.Fatalf("only %d log records:\n%s", n, buf.String())
	}
}
