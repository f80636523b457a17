package appmaster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
)

// markedProcs returns the processes carrying marker ("pid N" keys) and, by
// executor id, the fake executors among them.
func markedProcs(marker string) map[string]int {
	out := map[string]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if !strings.Contains("\x00"+string(env)+"\x00", "\x00"+marker+"\x00") {
			continue
		}
		if stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); strings.Contains(string(stat), ") Z ") {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out["pid "+e.Name()] = pid
		args := strings.Split(string(cmd), "\x00")
		for i, a := range args {
			if a == "--executor-id" && i+1 < len(args) {
				out[args[i+1]] = pid
			}
		}
	}
	return out
}

// executorProcs returns pid by executor id of the fake executors carrying marker.
func executorProcs(marker string) map[string]int {
	out := map[string]int{}
	for k, pid := range markedProcs(marker) {
		if !strings.HasPrefix(k, "pid ") {
			out[k] = pid
		}
	}
	return out
}

// TestAllocator drives the allocator and the AM endpoint against a resource
// manager and a node manager whose "executors" are a shell script.
func TestAllocator(t *testing.T) {
	marker := fmt.Sprintf("SPARKRPC_ALLOC_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	mk, mv, _ := strings.Cut(marker, "=")
	t.Setenv(mk, mv) // inherited by the node manager's children
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-sparkrpc")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	net := actor.NewMemNetwork()
	newEnv := func(name string, tr actor.Transport) *actor.Env {
		env, err := actor.NewEnv(name, nil, actor.WithTransport(tr), actor.WithLogger(log))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Shutdown(context.Background()) })
		return env
	}
	rmEnv := newEnv("rm", net.Transport("rm", 1))
	rm, err := resourcemanager.Start(rmEnv, resourcemanager.Config{StagingDir: filepath.Join(dir, "staging"), Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Shutdown(context.Background()) })
	nm, err := nodemanager.Start(context.Background(), newEnv("nm", net.Transport("127.0.0.1", 2)), nodemanager.Config{
		ResourceManager: rm.Address(), Capability: cluster.Resource{MemoryMB: 4096, Cores: 4}, Dir: filepath.Join(dir, "node"),
		Executable: fake, HeartbeatInterval: 20 * time.Millisecond, KillGrace: 100 * time.Millisecond, Logger: &log,
		EnvWhitelist: []string{mk}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		nm.Shutdown(ctx)
		if left := markedProcs(marker); len(left) != 0 {
			t.Errorf("processes left: %v", left)
		}
	})
	// The test plays the application master: its "AM container" just sleeps.
	amEnv := newEnv("am", net.Transport("am", 3))
	client := rmclient.New(amEnv, rm.Address())
	h, err := client.Submit(context.Background(), rmclient.Submission{AMResource: cluster.Resource{MemoryMB: 512, Cores: 1},
		AMCommand: []string{"/bin/sh", "-c", "exec sleep 60"}, ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ep := newAMEndpoint(context.Background(), log, nil, nil)
	amRef, err := amEnv.RegisterEndpoint(cluster.AMEndpointName, ep)
	if err != nil {
		t.Fatal(err)
	}
	rmRef := amEnv.RemoteRef(rm.Address(), cluster.ResourceManagerEndpointName)
	var reg *messages.AmRegisterResponse
	testutil.Eventually(t, 15*time.Second, "the AM to register", func() bool {
		reg, err = actor.AskAs[*messages.AmRegisterResponse](context.Background(), rmRef,
			&messages.AmRegister{AppId: h.AppID(), Host: "am", DriverUrl: "spark://CoarseGrainedScheduler@driver:1", Am: amRef.Proto()})
		return err == nil
	})
	if reg.GetMaxResource().GetMemoryMb() != 4096 {
		t.Fatalf("register response %v", reg)
	}
	conf := actor.NewConf().Set(cluster.KeyMaxExecutorFailures, "2").Set(cluster.KeyHeartbeatIntervalMs, "20").Set(cluster.KeyInitialAllocInterval, "10ms")
	alloc, err := newAllocator(amEnv, rmRef, h.AppID(), "spark://CoarseGrainedScheduler@driver:1", 2, cluster.Resource{MemoryMB: 512, Cores: 1}, conf, log)
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan string, 10)
	alloc.onLost = func(id, reason string) { lost <- id }
	ep.alloc.Store(alloc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool, 1)
	go func() { done <- alloc.run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	testutil.Eventually(t, 15*time.Second, "2 executors", func() bool { return len(executorProcs(marker)) == 2 })
	procs := executorProcs(marker)
	if procs["1"] == 0 || procs["2"] == 0 {
		t.Fatalf("executors %v", procs)
	}
	// The command line is the executor command.
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", procs["1"]))
	for _, want := range []string{"executor", "--driver-url\x00spark://CoarseGrainedScheduler@driver:1", "--cores\x001", "--app-id\x00" + h.AppID(), "--resourceProfileId\x000", "--hostname\x00127.0.0.1"} {
		if !strings.Contains(string(cmdline), want) {
			t.Fatalf("executor command %q lacks %q", cmdline, want)
		}
	}

	// Request a total of 3.
	if r, err := actor.AskAs[*messages.AmBoolResponse](context.Background(), amRef, &messages.AmRequestExecutors{Total: 3}); err != nil || !r.GetOk() {
		t.Fatalf("request executors: %v %v", r, err)
	}
	testutil.Eventually(t, 15*time.Second, "a third executor", func() bool { return executorProcs(marker)["3"] != 0 })

	// Kill executor 2 on request: its container goes, it is not replaced and
	// not counted as a failure.
	if _, err := actor.AskAs[*messages.AmBoolResponse](context.Background(), amRef, &messages.AmKillExecutors{ExecutorIds: []string{"2"}}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 15*time.Second, "executor 2 to be gone", func() bool { return executorProcs(marker)["2"] == 0 })
	r, err := actor.AskAs[*messages.AmExecutorLossReason](context.Background(), amRef, &messages.AmGetExecutorLossReason{ExecutorId: "2"})
	if err != nil || !r.GetKnown() || r.GetExitCausedByApp() || r.GetExitStatus() != cluster.ContainerExitKilledByAM {
		t.Fatalf("loss reason of a killed executor: %v %v", r, err)
	}

	// An executor that dies is replaced and counted.
	f := amRef.Ask(context.Background(), &messages.AmGetExecutorLossReason{ExecutorId: "1"}) // answered once it is known
	syscall.Kill(executorProcs(marker)["1"], syscall.SIGKILL)
	r, err = actor.ResultAs[*messages.AmExecutorLossReason](f)
	if err != nil || !r.GetKnown() || !r.GetExitCausedByApp() || r.GetExitStatus() != 137 || !strings.Contains(r.GetMessage(), "Exit status: 137.") {
		t.Fatalf("loss reason of a killed process: %v %v", r, err)
	}
	testutil.Eventually(t, 15*time.Second, "a replacement executor", func() bool { return executorProcs(marker)["4"] != 0 })
	if got := len(executorProcs(marker)); got != 2 {
		t.Fatalf("%d executors, want 2", got)
	}
	// A hung executor (its process stopped with SIGSTOP) is killed and
	// replaced on request: its container goes (SIGTERM stays pending on a
	// stopped process; SIGKILL after the grace period ends it), another
	// executor starts in its place, and it is not counted as a failure.
	hung := executorProcs(marker)["4"]
	if err := syscall.Kill(hung, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	f = amRef.Ask(context.Background(), &messages.AmGetExecutorLossReason{ExecutorId: "4"})
	if _, err := actor.AskAs[*messages.AmBoolResponse](context.Background(), amRef,
		&messages.AmKillExecutors{ExecutorIds: []string{"4"}, Replace: true}); err != nil {
		t.Fatal(err)
	}
	r, err = actor.ResultAs[*messages.AmExecutorLossReason](f)
	if err != nil || !r.GetKnown() || r.GetExitCausedByApp() || r.GetExitStatus() != cluster.ContainerExitKilledByAM {
		t.Fatalf("loss reason of a killed and replaced executor: %v %v", r, err)
	}
	testutil.Eventually(t, 15*time.Second, "the hung executor's process to be gone", func() bool { return !procAlive(hung) })
	testutil.Eventually(t, 15*time.Second, "an executor in place of the hung one", func() bool { return executorProcs(marker)["5"] != 0 })
	if got := len(executorProcs(marker)); got != 2 {
		t.Fatalf("%d executors after kill and replace, want 2", got)
	}
	select {
	case err := <-alloc.failed:
		t.Fatalf("failed after one failure: %v", err)
	default:
	}
	// A second failure reaches spark.executor.maxNumFailures=2.
	syscall.Kill(executorProcs(marker)["3"], syscall.SIGKILL)
	select {
	case err := <-alloc.failed:
		if ee, ok := err.(*cluster.AMExitError); !ok || ee.Code != cluster.ExitMaxExecutorFailures || ee.Reason != "Max number of executor failures (2) reached" {
			t.Fatalf("failure %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no failure after 2 executor failures")
	}
	var ids []string
	for len(ids) < 4 {
		select {
		case id := <-lost:
			ids = append(ids, id)
		case <-time.After(5 * time.Second):
			t.Fatalf("lost executors reported: %v", ids)
		}
	}
	if fmt.Sprint(ids) != "[2 1 4 3]" {
		t.Fatalf("lost executors reported: %v", ids)
	}
	// Killing the application tells the allocator to stop.
	if _, err := client.Kill(context.Background(), h.AppID(), ""); err != nil {
		t.Fatal(err)
	}
	select {
	case shutdown := <-done:
		if !shutdown {
			t.Fatal("the allocator stopped without being told the application ended")
		}
		done <- true
	case <-time.After(10 * time.Second):
		t.Fatal("the allocator did not stop after the application was killed")
	}
	testutil.Eventually(t, 15*time.Second, "every executor to be gone", func() bool { return len(executorProcs(marker)) == 0 })
}

// procAlive reports whether pid exists and is not a zombie.
func procAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}
