package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/internal/cli"
)

// SPARKRPC_AUTH_SECRET_FILE may name a pipe that the parent hands on
// (/proc/self/fd/N, what sparkrpc itself gives the programs it starts, or
// a shell's <(...)). When submit hands the submission over to the program
// given as primary resource, that program gets the secret too, as it
// does from SPARKRPC_AUTH_SECRET. Before, submit marked the inherited
// descriptor close-on-exec and passed the variable on unchanged: the
// program found no such file and the submission failed.
func TestHandOverPassesAnInheritedSecretPipe(t *testing.T) {
	marker := newMarker(t)
	dir := t.TempDir()
	other := otherProgram(t, dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	secret := "pipe-secret-" + strconv.Itoa(os.Getpid())
	if _, err := w.WriteString(secret); err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := startInherited(t, marker, dir, []string{cli.EnvAuthSecretFile + "=/proc/self/fd/3"}, []*os.File{r},
		"submit", "--master", "local[1]", "--conf", "spark.authenticate=true", "--conf", "spark.ui.enabled=false",
		"--class", "SparkPi", other, "4")
	r.Close()
	if code := p.wait(t, 2*time.Minute); code != 0 || !strings.Contains(p.stdout.String(), "Pi is roughly") {
		t.Fatalf("submit exited %d\nstdout:\n%s\nstderr:\n%s", code, p.stdout, p.stderr)
	}
}
