package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A file descriptor that sparkrpc inherited without close-on-exec (one a
// shell or a supervisor left open) reaches none of the processes it starts:
// an embedded node manager's executors, tenant code, get only what they are
// handed. Before, every executor inherited it.
func TestContainersDoNotInheritTheCommandsDescriptors(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	leaked := filepath.Join(dir, "inherited-not-for-containers")
	f, err := os.Create(leaked)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := startInherited(t, marker, dir, nil, []*os.File{f}, "submit", "--master", "local-cluster[1,1,512]",
		"--conf", "spark.examples.sparkPi.taskDelay=100ms", "--class", "SparkPi", "spark-internal", "30")
	var executor procInfo
	testutil.Eventually(t, time.Minute, "an executor", func() bool {
		var ok bool
		executor, ok = findProcess(marker, " executor ")
		return ok
	})
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(executor.pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink("/proc/" + strconv.Itoa(executor.pid) + "/fd/" + fd.Name()); target == leaked {
			t.Errorf("the executor (pid %d) holds file descriptor %s of submit's: %s", executor.pid, fd.Name(), target)
		}
	}
	if code := p.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("submit exited %d\n%s", code, p.stderr)
	}
	noneLeft(t, marker)
}
