package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// secretLike matches what GenerateSecret makes: 64 hex digits. The test
// cannot learn an application's secret (it lives in the resource manager's
// memory and on its containers' pipes), so it looks for any such string
// that its own environment does not hold.
var secretLike = regexp.MustCompile(`[0-9a-f]{64}`)

// leakScanner finds secrets where other users or processes could read
// them: the command lines and environments of the job's processes and the
// files under the cluster's folders.
type leakScanner struct {
	t        *testing.T
	marker   string
	known    [][]byte // secrets the test knows (the cluster's)
	ignore   map[string]bool
	dirs     []string
	seenArgs map[string]bool // a word of the command line of each kind of process seen
	leaks    map[string]bool
}

func newLeakScanner(t *testing.T, marker string, known [][]byte, dirs ...string) *leakScanner {
	s := &leakScanner{t: t, marker: marker, known: known, dirs: dirs, ignore: map[string]bool{},
		seenArgs: map[string]bool{}, leaks: map[string]bool{}}
	for _, m := range secretLike.FindAllString(strings.Join(os.Environ(), "\n"), -1) {
		s.ignore[m] = true
	}
	return s
}

// leaked reports what in b looks like a secret.
func (s *leakScanner) leaked(b []byte) string {
	for _, k := range s.known {
		if bytes.Contains(b, k) {
			return "the cluster's secret"
		}
	}
	for _, m := range secretLike.FindAll(b, -1) {
		if !s.ignore[string(m)] {
			return "a 64-hex-digit secret"
		}
	}
	return ""
}

// scan checks every marked process and every file now.
func (s *leakScanner) scan() {
	for _, p := range markedProcesses(s.marker) {
		for _, w := range []string{"resourcemanager", "nodemanager", "submit", "applicationmaster", "executor"} {
			if len(p.args) > 1 && p.args[1] == w {
				s.seenArgs[w] = true
			}
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/" + f)
			if err != nil {
				continue
			}
			if what := s.leaked(b); what != "" {
				s.leaks[what+" in /proc/PID/"+f+" of "+strings.Join(p.args, " ")] = true
			}
		}
	}
	for _, d := range s.dirs {
		filepath.Walk(d, func(path string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil {
				if what := s.leaked(b); what != "" {
					s.leaks[what+" in "+path] = true
				}
			}
			return nil
		})
	}
}

// watch scans until p exits, then once more.
func (s *leakScanner) watch(p *proc, d time.Duration) int {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s.scan()
		select {
		case <-p.done:
			s.scan()
			return p.code
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%v did not exit within %s\nstderr:\n%s", p.cmd.Args[1:], d, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *leakScanner) check(wantProcs ...string) {
	s.t.Helper()
	for l := range s.leaks {
		s.t.Errorf("secret leaked: %s", l)
	}
	for _, w := range wantProcs {
		if !s.seenArgs[w] {
			s.t.Errorf("no %s process was seen", w)
		}
	}
}

// SparkPi runs with spark.authenticate on local[N]: the executor in the
// submitting process connects to the driver with the application's
// secret. Before, it was given none, was refused, and the driver waited
// for it for ever.
func TestSparkPiAuthenticatedOnLocal(t *testing.T) {
	marker := newMarker(t)
	secret := []byte("0123456789abcdef-local-secret-of-the-test")
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	s := newLeakScanner(t, marker, [][]byte{secret})
	p := start(t, marker, "submit", "--master", "local[2]", "--conf", "spark.authenticate=true",
		"--conf", "spark.authenticate.secret.file="+file, "--class", "SparkPi", "spark-internal", "10")
	if code := s.watch(p, time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr)
	}
	if got, want := piOf(t, p.stdout.String()), wantPi(t, 10); got != want {
		t.Errorf("Pi %s, want %s", got, want)
	}
	s.check("submit")
}

// SparkPi runs over TLS, with and without spark.authenticate, on local[N]
// and on local-cluster in both deploy modes: the executor in the submitting
// process and the embedded resource manager and node managers keep to the
// submission's spark.ssl.rpc.* keys. Before, local[N]'s executor dialled
// without TLS and the driver waited for it for ever, and local-cluster's
// daemons listened in plaintext, so the submission could not reach them.
func TestSparkPiOverTLS(t *testing.T) {
	cert, key := testutil.SelfSignedCert(t, t.TempDir())
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef-tls-secret-of-the-test"), 0o600); err != nil {
		t.Fatal(err)
	}
	tls := []string{"--conf", "spark.ssl.rpc.enabled=true", "--conf", "spark.ssl.rpc.certChain=" + cert,
		"--conf", "spark.ssl.rpc.privateKey=" + key, "--conf", "spark.ssl.rpc.trustStore=" + cert}
	auth := []string{"--conf", "spark.authenticate=true", "--conf", "spark.authenticate.secret.file=" + secret}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"local", append([]string{"--master", "local[2]"}, tls...)},
		{"local with authentication", append(append([]string{"--master", "local[2]"}, tls...), auth...)},
		{"local-cluster client", append([]string{"--master", "local-cluster[2,1,512]", "--deploy-mode", "client"}, tls...)},
		{"local-cluster cluster with authentication", append(append([]string{"--master", "local-cluster[2,1,512]", "--deploy-mode", "cluster"}, tls...), auth...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := newMarker(t)
			stdout, stderr, code := runBin(t, marker, 2*time.Minute, append(append([]string{"submit"}, tc.args...), "--class", "SparkPi", "spark-internal", "10")...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			checkPi(t, stdout, 10)
		})
	}
}

// SparkPi runs with spark.authenticate on local-cluster: the embedded
// daemons and the application get generated secrets, executors register
// with the driver, and no secret is in a command line, an environment or a
// file.
func TestSparkPiAuthenticatedOnLocalCluster(t *testing.T) {
	for _, mode := range []string{"client", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			marker := newMarker(t)
			dir := t.TempDir()
			args := []string{"submit", "--master", "local-cluster[2,1,512]", "--deploy-mode", mode,
				"--conf", "spark.authenticate=true", "--conf", "spark.sparkrpc.localCluster.dir=" + dir,
				"--conf", "spark.examples.sparkPi.taskDelay=20ms"}
			var known [][]byte
			if mode == "client" {
				// A secret the user gives is the embedded daemons' (it
				// opens their UIs); it leaks nowhere either.
				secret := []byte("0123456789abcdef-local-cluster-secret")
				file := filepath.Join(t.TempDir(), "secret")
				if err := os.WriteFile(file, secret, 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--conf", "spark.authenticate.secret.file="+file)
				known = append(known, secret)
			}
			s := newLeakScanner(t, marker, known, dir)
			p := start(t, marker, append(args, "--class", "SparkPi", "spark-internal", "40")...)
			if code := s.watch(p, 2*time.Minute); code != 0 {
				t.Fatalf("exit %d\n%s", code, p.stderr)
			}
			if got, want := piOf(t, p.stdout.String()), wantPi(t, 40); got != want {
				t.Errorf("Pi %s, want %s", got, want)
			}
			s.check("submit", "applicationmaster", "executor")
		})
	}
}

// SparkPi runs with spark.authenticate against a resource manager and node
// managers started as daemons with the cluster's secret in a file: in both
// deploy modes, every connection is authenticated (a peer without the
// right key is refused), and no secret is in a command line, an
// environment or a file of the nodes or the staging folder.
func TestSparkPiAuthenticatedOnResourceManager(t *testing.T) {
	marker := newMarker(t)
	secret := []byte("0123456789abcdef-cluster-secret-of-the-test")
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	auth := []string{"--conf", "spark.authenticate=true", "--conf", "spark.authenticate.secret.file=" + secretFile}
	staging := t.TempDir()
	c := startRMCluster(t, marker, append([]string{"--staging-dir", staging}, auth...),
		append([]string{"--memory", "2g", "--cores", "2"}, auth...), append([]string{"--memory", "2g", "--cores", "2"}, auth...))
	defer c.stop(t)
	// Without the secret, the resource manager does not answer.
	if _, stderr, code := runBin(t, marker, time.Minute, "apps", "--rm", c.addr); code == 0 {
		t.Errorf("apps without the secret: exit 0\n%s", stderr)
	}
	if out, stderr, code := runBin(t, marker, time.Minute, append([]string{"apps", "--rm", c.addr}, auth...)...); code != 0 {
		t.Errorf("apps with the secret: exit %d\n%s%s", code, out, stderr)
	}
	for _, mode := range []string{"client", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			s := newLeakScanner(t, marker, [][]byte{secret}, append([]string{staging}, c.dirs...)...)
			p := start(t, marker, append(append([]string{"submit", "--master", "rm://" + c.addr, "--deploy-mode", mode}, auth...),
				"--conf", "spark.examples.sparkPi.taskDelay=20ms", "--conf", "spark.yarn.report.interval=100ms",
				"--num-executors", "2", "--class", "SparkPi", "spark-internal", "40")...)
			if code := s.watch(p, 2*time.Minute); code != 0 {
				t.Fatalf("exit %d\n%s", code, p.stderr)
			}
			if mode == "client" {
				if got, want := piOf(t, p.stdout.String()), wantPi(t, 40); got != want {
					t.Errorf("Pi %s, want %s", got, want)
				}
			}
			s.check("resourcemanager", "nodemanager", "submit", "applicationmaster", "executor")
		})
	}
}

// runAs runs the binary to completion as user (SPARK_USER).
func runAs(t *testing.T, marker, user string, d time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	p := startIn(t, marker, t.TempDir(), []string{"SPARK_USER=" + user}, args...)
	code = p.wait(t, d)
	return p.stdout.String(), p.stderr.String(), code
}

// With spark.acls.enable another user may neither read an application's
// logs nor kill it; its owner and the users its ACLs name may.
func TestACLsRefuseOtherUsers(t *testing.T) {
	marker := newMarker(t)
	c := startRMCluster(t, marker, nil, []string{"--memory", "2g", "--cores", "2"})
	defer c.stop(t)
	master := "rm://" + c.addr
	_, stderr, code := runAs(t, marker, "alice", time.Minute, "submit", "--master", master, "--deploy-mode", "cluster",
		"--conf", "spark.acls.enable=true", "--conf", "spark.ui.view.acls=victor", "--conf", "spark.yarn.submit.waitAppCompletion=false",
		"--conf", "spark.examples.sparkPi.taskDelay=200ms", "--num-executors", "1", "--class", "SparkPi", "spark-internal", "2000")
	m := appIDRe.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("submit: exit %d\n%s", code, stderr)
	}
	app := m[1]
	testutil.Eventually(t, time.Minute, "the application to run", func() bool {
		out, _, _ := runBin(t, marker, 30*time.Second, "submit", "--master", master, "--status", app)
		return strings.Contains(out, "state: RUNNING")
	})
	if _, stderr, code := runAs(t, marker, "mallory", time.Minute, "logs", "--rm", c.addr, app); code == 0 || !strings.Contains(stderr, "permission denied") {
		t.Errorf("logs as another user: exit %d\n%s", code, stderr)
	}
	if out, stderr, code := runAs(t, marker, "victor", time.Minute, "logs", "--rm", c.addr, app); code != 0 || !strings.Contains(out, "LogType:stderr") {
		t.Errorf("logs as a view-ACL user: exit %d\n%s%s", code, out, stderr)
	}
	for _, user := range []string{"mallory", "victor"} {
		if _, stderr, code := runAs(t, marker, user, time.Minute, "submit", "--master", master, "--kill", app); code == 0 || !strings.Contains(stderr, "permission denied") {
			t.Errorf("kill as %s: exit %d\n%s", user, code, stderr)
		}
	}
	if out, stderr, code := runAs(t, marker, "alice", time.Minute, "submit", "--master", master, "--kill", app); code != 0 || !strings.Contains(out, "Killed application") {
		t.Errorf("kill as the owner: exit %d\n%s%s", code, out, stderr)
	}
}
