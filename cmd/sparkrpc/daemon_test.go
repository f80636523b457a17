package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A node manager whose resource manager is not there retries with backoff,
// logs each attempt, and exits promptly on SIGTERM or SIGINT.
func TestNodeManagerWithoutRMExitsOnSignal(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := newMarker(t)
			p := start(t, marker, "nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir())
			testutil.Eventually(t, 30*time.Second, "two registration attempts", func() bool { return strings.Contains(p.stderr.String(), "attempt=2 ") })
			sent := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, 10*time.Second)
			t.Logf("exited %s after the signal", time.Since(sent).Round(time.Millisecond))
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, p.stderr)
			}
			if n := strings.Count(p.stderr.String(), "cannot register with the resource manager; retrying"); n < 2 {
				t.Errorf("%d attempts logged:\n%s", n, p.stderr)
			}
		})
	}
}

// With --register-timeout the node manager gives up and says why.
func TestNodeManagerRegisterTimeout(t *testing.T) {
	marker := newMarker(t)
	_, stderr, code := runBin(t, marker, 30*time.Second, "nodemanager", "--rm", "127.0.0.1:1", "--dir", t.TempDir(), "--register-timeout", "1s")
	if code != 1 || !strings.Contains(stderr, "sparkrpc: node manager could not register: the resource manager at 127.0.0.1:1 did not answer within 1s") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// The resource manager exits 0 promptly on SIGINT as on SIGTERM.
func TestResourceManagerExitsOnSignal(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := newMarker(t)
			c := startRMCluster(t, marker, nil)
			sent := time.Now()
			if err := c.rm.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := c.rm.wait(t, 10*time.Second)
			t.Logf("exited %s after the signal", time.Since(sent).Round(time.Millisecond))
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, c.rm.stderr)
			}
		})
	}
}

// A busy --port moves to the next port, logged, and the daemon prints the
// address it bound; with spark.port.maxRetries=0 it is an error, exit 1.
func TestBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct{ daemon, service, listening string }{
		{"resourcemanager", "sparkResourceManager", "ResourceManager listening on rm://127.0.0.1:"},
		{"nodemanager", "sparkNodeManager", "NodeManager listening on 127.0.0.1:"},
	} {
		args := []string{tc.daemon, "--port", strconv.Itoa(busy)}
		if tc.daemon == "nodemanager" {
			args = append(args, "--rm", "127.0.0.1:1", "--dir", t.TempDir())
		}
		t.Run(tc.daemon+"/moves", func(t *testing.T) {
			marker := newMarker(t)
			p := start(t, marker, args...)
			re := regexp.MustCompile(regexp.QuoteMeta(tc.listening) + `(\d+)`)
			var port int
			testutil.Eventually(t, 30*time.Second, "the address it bound", func() bool {
				m := re.FindStringSubmatch(p.stdout.String())
				if m != nil {
					port, _ = strconv.Atoi(m[1])
				}
				return m != nil
			})
			if port <= busy {
				t.Errorf("bound port %d, busy port %d", port, busy)
			}
			want := fmt.Sprintf("Service '%s' could not bind on port %d (in use). Attempting port %d (spark.port.maxRetries=16).", tc.service, busy, busy+1)
			// stdout and stderr are read by separate goroutines: the warning
			// written before the bind may be read after the address.
			testutil.Eventually(t, 30*time.Second, "the bind warning on stderr", func() bool {
				return strings.Contains(p.stderr.String(), want)
			})
			p.cmd.Process.Signal(syscall.SIGTERM)
			if code := p.wait(t, 10*time.Second); code != 0 {
				t.Errorf("exit %d after SIGTERM\n%s", code, p.stderr)
			}
		})
		t.Run(tc.daemon+"/web UI port taken", func(t *testing.T) {
			// The daemon's own port is free; its UI's is not: it fails,
			// and never says it is listening.
			uiArgs := append([]string{tc.daemon, "--port", "0", "--webui-port", strconv.Itoa(busy), "--conf", "spark.port.maxRetries=0"}, args[3:]...)
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 30*time.Second, uiArgs...)
			if code != 1 || !strings.Contains(stderr, "in use") || strings.Contains(stdout, "listening on") {
				t.Fatalf("exit %d, want 1, the port in use, and no listening line\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
		})
		t.Run(tc.daemon+"/no retries", func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 30*time.Second, append(args, "--conf", "spark.port.maxRetries=0")...)
			want := fmt.Sprintf("sparkrpc: cannot listen on 127.0.0.1 port %d: the port is in use (spark.port.maxRetries=0: no other port is tried)\n", busy)
			if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stdout, "listening on") {
				t.Fatalf("exit %d, want 1 and %q\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
			}
		})
	}
}

// blackHole is a TCP listener that accepts connections and never answers:
// a peer that hangs. accepted gets a value per connection.
func blackHole(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), ch
}

// Every command that waits on a peer that never answers stops promptly on
// SIGTERM.
func TestSignalStopsCommandsWaitingOnAHungPeer(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(addr string) []string
	}{
		{"nodemanager", func(a string) []string { return []string{"nodemanager", "--rm", a, "--dir", t.TempDir()} }},
		{"executor", func(a string) []string {
			return []string{"executor", "--driver-url", "spark://CoarseGrainedScheduler@" + a, "--executor-id", "1", "--cores", "1", "--app-id", "app"}
		}},
		{"submit", func(a string) []string {
			return []string{"submit", "--master", "rm://" + a, "--class", "SparkPi", "spark-internal"}
		}},
		{"submit --status", func(a string) []string {
			return []string{"submit", "--master", "rm://" + a, "--status", "application_1_0001"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := newMarker(t)
			addr, accepted := blackHole(t)
			p := start(t, marker, tc.args(addr)...)
			select {
			case <-accepted:
			case <-p.done:
				t.Fatalf("exited %d before connecting\n%s", p.code, p.stderr)
			case <-time.After(30 * time.Second):
				t.Fatal("no connection to the hung peer")
			}
			sent := time.Now()
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, 10*time.Second)
			t.Logf("exit %d %s after SIGTERM", code, time.Since(sent).Round(time.Millisecond))
			// A node manager that never registered has nothing to
			// unregister: it does not ask the hung peer to.
			if strings.Contains(p.stderr.String(), "unregister") {
				t.Errorf("a node manager that never registered tried to unregister:\n%s", p.stderr)
			}
		})
	}
}

// A node manager stopped by SIGTERM unregisters: by the time it has
// exited, the resource manager reports it SHUTDOWN, not RUNNING until its
// expiry makes it LOST.
func TestNodeManagerUnregistersOnSIGTERM(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "1g", "--cores", "1"}, []string{"--memory", "1g", "--cores", "1"})
	defer c.stop(t)
	rmUI := uiURL(t, c.rm, "ResourceManager")
	nm := c.nms[0]
	nm.cmd.Process.Signal(syscall.SIGTERM)
	if code := nm.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the node manager exited %d\n%s", code, nm.stderr)
	}
	code, body := httpGet(t, rmUI+"/api/v1/nodes")
	var nodes []struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(body), &nodes); code != 200 || err != nil {
		t.Fatalf("GET /api/v1/nodes = %d %v\n%s", code, err, body)
	}
	states := map[string]int{}
	for _, n := range nodes {
		states[n.State]++
	}
	if states["SHUTDOWN"] != 1 || states["RUNNING"] != 1 {
		t.Fatalf("node states %v, want one SHUTDOWN and one RUNNING\n%s", states, body)
	}
}
