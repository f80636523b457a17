package netty_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

func TestAuthSecretFromFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	if err := netty.WriteSecretFile(path, []byte("s3cret\n")); err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set(netty.KeyAuthenticate, "true").Set(netty.KeyAuthenticateSecretFile, path)
	got, err := netty.AuthSecret(conf)
	if err != nil || string(got) != "s3cret" {
		t.Fatalf("AuthSecret = %q, %v; want s3cret", got, err)
	}
	// The secret itself wins over the file.
	conf.Set(netty.KeyAuthenticateSecret, "inline")
	if got, _ := netty.AuthSecret(conf); string(got) != "inline" {
		t.Fatalf("AuthSecret = %q, want inline", got)
	}
	conf.Remove(netty.KeyAuthenticateSecret)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	var ce *actor.ConfError
	if _, err := netty.AuthSecret(conf); !errors.As(err, &ce) || ce.Key != netty.KeyAuthenticateSecretFile {
		t.Fatalf("a group-readable secret file: err = %v, want a ConfError for %s", err, netty.KeyAuthenticateSecretFile)
	}
	// WriteSecretFile makes an existing file private again.
	if err := netty.WriteSecretFile(path, []byte("again")); err != nil {
		t.Fatal(err)
	}
	if got, err := netty.AuthSecret(conf); err != nil || string(got) != "again" {
		t.Fatalf("AuthSecret = %q, %v; want again", got, err)
	}
}

func TestAuthSecretFromPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write([]byte("piped")) //nolint:errcheck // the read below checks it
		w.Close()
	}()
	got, err := netty.ReadSecretFile("/proc/self/fd/" + strconv.Itoa(int(r.Fd())))
	if err != nil || string(got) != "piped" {
		t.Fatalf("ReadSecretFile(pipe) = %q, %v; want piped", got, err)
	}
}

func TestAuthSecretMissing(t *testing.T) {
	conf := actor.NewConf().Set(netty.KeyAuthenticate, "true")
	if _, err := netty.AuthSecret(conf); !errors.Is(err, netty.ErrNoSecret) {
		t.Fatalf("err = %v, want ErrNoSecret", err)
	}
	if got, err := netty.AuthSecret(actor.NewConf()); got != nil || err != nil {
		t.Fatalf("auth off: %q, %v; want nil, nil", got, err)
	}
}
