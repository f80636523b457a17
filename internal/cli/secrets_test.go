package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/cli"
	"github.com/sparkrpc/sparkrpc/netty"
)

// SPARKRPC_AUTH_SECRET_FILE gives a command the cluster's secret from a
// file, or a pipe a parent hands on, which is read once, into memory.
func TestSecretFileFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "secret")
	if err := netty.WriteSecretFile(good, []byte("from-a-file\n")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cli.EnvAuthSecret, "")
	t.Setenv(cli.EnvAuthSecretFile, good)
	conf, err := cli.DaemonConf("", []string{netty.KeyAuthenticate + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	if s := conf.Get(netty.KeyAuthenticateSecret, ""); s != "from-a-file" {
		t.Errorf("secret %q, want the file's", s)
	}
	if conf.Contains(netty.KeyAuthenticateSecretFile) {
		t.Errorf("%s is set: a pipe could not be read again", netty.KeyAuthenticateSecretFile)
	}

	// Without authentication the file is not read.
	conf, err = cli.DaemonConf("", nil)
	if err != nil || conf.Contains(netty.KeyAuthenticateSecret) {
		t.Errorf("authentication off: err %v, secret set %v", err, conf != nil && conf.Contains(netty.KeyAuthenticateSecret))
	}

	// A file others can read is refused, naming the variable and the problem.
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cli.EnvAuthSecretFile, open)
	_, err = cli.DaemonConf("", []string{netty.KeyAuthenticate + "=true"})
	var ce *actor.ConfError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), cli.EnvAuthSecretFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a secret file of mode 0644: %v, want a *actor.ConfError naming $%s", err, cli.EnvAuthSecretFile)
	}

	// SPARKRPC_AUTH_SECRET comes first, and a conf's own secret file before both.
	t.Setenv(cli.EnvAuthSecret, "from-the-environment")
	conf, err = cli.DaemonConf("", []string{netty.KeyAuthenticate + "=true"})
	if err != nil || conf.Get(netty.KeyAuthenticateSecret, "") != "from-the-environment" {
		t.Errorf("with %s set: err %v, secret %q", cli.EnvAuthSecret, err, conf.Get(netty.KeyAuthenticateSecret, ""))
	}
	conf, err = cli.DaemonConf("", []string{netty.KeyAuthenticate + "=true", netty.KeyAuthenticateSecretFile + "=" + good})
	if err != nil || conf.Contains(netty.KeyAuthenticateSecret) {
		t.Errorf("with %s in the conf: err %v, the environment's secret set %v", netty.KeyAuthenticateSecretFile, err, err == nil && conf.Contains(netty.KeyAuthenticateSecret))
	}
}
