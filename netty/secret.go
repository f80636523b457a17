// The shared secret: read from the conf, or from the file the conf names.

package netty

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

// ErrNoSecret is the error of a conf with spark.authenticate on and neither
// spark.authenticate.secret nor spark.authenticate.secret.file set.
var ErrNoSecret = fmt.Errorf("netty: %s is true but neither %s nor %s is set", KeyAuthenticate, KeyAuthenticateSecret, KeyAuthenticateSecretFile)

// AuthSecret returns the shared secret that conf asks for: nil when
// spark.authenticate is off; else spark.authenticate.secret when it is set,
// or the contents of the file spark.authenticate.secret.file names (one
// trailing newline removed). A secret file readable by group or other is
// refused: a secret must not be readable by another user of the machine.
func AuthSecret(conf *actor.Conf) ([]byte, error) {
	on, err := conf.GetBool(KeyAuthenticate, false)
	if err != nil || !on {
		return nil, err
	}
	if s, ok := conf.Lookup(KeyAuthenticateSecret); ok && s != "" {
		return []byte(s), nil
	}
	path, ok := conf.Lookup(KeyAuthenticateSecretFile)
	if !ok || path == "" {
		return nil, ErrNoSecret
	}
	return ReadSecretFile(path)
}

// ReadSecretFile reads a secret from path, which must be a regular file or
// a pipe (such as /proc/self/fd/N for a pipe a parent process handed on)
// that neither group nor other can read or write, and not empty. One
// trailing newline (LF or CRLF) is removed.
func ReadSecretFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &actor.ConfError{Key: KeyAuthenticateSecretFile, Value: path, Err: err}
	}
	if !st.Mode().IsRegular() && st.Mode()&os.ModeNamedPipe == 0 {
		return nil, &actor.ConfError{Key: KeyAuthenticateSecretFile, Value: path, Err: errors.New("neither a regular file nor a pipe")}
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, &actor.ConfError{Key: KeyAuthenticateSecretFile, Value: path,
			Err: fmt.Errorf("mode %#o lets group or other read it; chmod 600 it", st.Mode().Perm())}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &actor.ConfError{Key: KeyAuthenticateSecretFile, Value: path, Err: err}
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return nil, &actor.ConfError{Key: KeyAuthenticateSecretFile, Value: path, Err: errors.New("the file is empty")}
	}
	return []byte(s), nil
}

// SecretPipe returns the read end of a pipe that holds secret and is
// closed for writing, for a child process to inherit (exec.Cmd.ExtraFiles)
// and read as its spark.authenticate.secret.file (/proc/self/fd/N): the
// secret reaches the child in neither a file, its command line nor its
// environment. A secret is far smaller than a pipe's buffer (at most 4096
// bytes here), so the write does not block.
func SecretPipe(secret []byte) (*os.File, error) {
	if len(secret) > 4096 {
		return nil, fmt.Errorf("the secret has %d bytes, more than 4096", len(secret))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(secret)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// WriteSecretFile writes secret to path with mode 0600 (replacing a file
// there), so that ReadSecretFile accepts it.
func WriteSecretFile(path string, secret []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil { // an existing file keeps its mode otherwise
		f.Close()
		return err
	}
	if _, err := f.Write(secret); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
