package cli

// This file holds how commands get the cluster's shared secret and the
// containers' environment whitelist: never from the command line, which
// every user of the machine can read with ps.

import (
	"fmt"
	"os"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/netty"
)

// EnvAuthSecret is the environment variable that gives a command the
// cluster's secret (spark.authenticate.secret) when neither its conf nor
// its --properties-file does. Only this process reads it; containers do
// not inherit it.
const EnvAuthSecret = "SPARKRPC_AUTH_SECRET"

// EnvAuthSecretFile names a file that holds the cluster's secret, of mode
// 0600, or a pipe a parent process hands on (/proc/self/fd/N), for when
// neither the conf nor SPARKRPC_AUTH_SECRET gives one. With authentication
// on, the command reads it once, at the start, into its memory. submit
// hands SPARKRPC_AUTH_SECRET on to the program it runs this way.
const EnvAuthSecretFile = "SPARKRPC_AUTH_SECRET_FILE"

// EnvContainerEnvWhitelist names, comma-separated, variables of a node
// manager's environment (the nodemanager daemon's, or submit's for an
// embedded local cluster) that containers get too
// (cluster.KeyContainerEnvWhitelist).
const EnvContainerEnvWhitelist = "SPARKRPC_CONTAINER_ENV_WHITELIST"

// errSecretOnCommandLine is the error of --conf spark.authenticate.secret=...
func errSecretOnCommandLine() error {
	return Usagef("%s must not be given with --conf: every user of the machine can read a command line. "+
		"Use --conf %s=FILE (a file of mode 0600), a --properties-file, or the environment variable %s",
		netty.KeyAuthenticateSecret, netty.KeyAuthenticateSecretFile, EnvAuthSecret)
}

// SetConfArg sets one --conf KEY=VALUE in conf, refusing the secret.
func SetConfArg(conf *actor.Conf, kv string) error {
	if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == netty.KeyAuthenticateSecret {
		return errSecretOnCommandLine()
	}
	if err := conf.SetFromArg(kv); err != nil {
		return Usagef("%v", err)
	}
	return nil
}

// LoadPropertiesFile adds the properties of path (spark-defaults style
// "key value" or "key=value" lines) to conf; an empty path adds nothing.
// The file may hold the secret, so it must not be readable by others when
// it does.
func LoadPropertiesFile(conf *actor.Conf, path string) error {
	if path == "" {
		return nil
	}
	file, err := os.Open(path)
	if err != nil {
		return Usagef("--properties-file: %v", err)
	}
	defer file.Close()
	c := actor.NewConf()
	if err := c.LoadProperties(file); err != nil {
		return Usagef("--properties-file %s: %v", path, err)
	}
	if _, ok := c.Lookup(netty.KeyAuthenticateSecret); ok {
		if st, err := file.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
			return Usagef("--properties-file %s holds %s but has mode %#o: chmod 600 it", path, netty.KeyAuthenticateSecret, st.Mode().Perm())
		}
	}
	for k, v := range c.All() {
		conf.Set(k, v)
	}
	return nil
}

// applyEnvironment fills in what the environment gives a command: the
// cluster's secret from SPARKRPC_AUTH_SECRET or SPARKRPC_AUTH_SECRET_FILE
// when conf names none, and the containers' environment whitelist.
func applyEnvironment(conf *actor.Conf) error {
	if !conf.Contains(netty.KeyAuthenticateSecret) && !conf.Contains(netty.KeyAuthenticateSecretFile) {
		if s := os.Getenv(EnvAuthSecret); s != "" {
			conf.Set(netty.KeyAuthenticateSecret, s)
		} else if path := os.Getenv(EnvAuthSecretFile); path != "" {
			if err := inlineEnvSecretFile(conf, path); err != nil {
				return err
			}
		}
	}
	if w := os.Getenv(EnvContainerEnvWhitelist); w != "" {
		conf.SetIfMissing(cluster.KeyContainerEnvWhitelist, w)
	}
	return nil
}

// inlineEnvSecretFile reads the secret file path, which
// SPARKRPC_AUTH_SECRET_FILE names, into conf when conf turns
// authentication on. A pipe can be read only once: the secret is kept in
// this process's memory, not the path.
func inlineEnvSecretFile(conf *actor.Conf, path string) error {
	on, err := conf.GetBool(netty.KeyAuthenticate, false)
	if err != nil || !on {
		return err
	}
	secret, err := netty.ReadSecretFile(path)
	if err != nil {
		return fmt.Errorf("$%s: %w", EnvAuthSecretFile, err)
	}
	conf.Set(netty.KeyAuthenticateSecret, string(secret))
	return nil
}

// PropertiesConf is the conf a command's flags give: its
// --properties-file, then its --conf flags; DaemonConf adds the
// environment's.
func PropertiesConf(propertiesFile string, kvs []string) (*actor.Conf, error) {
	conf := actor.NewConf()
	if err := LoadPropertiesFile(conf, propertiesFile); err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		if err := SetConfArg(conf, kv); err != nil {
			return nil, err
		}
	}
	return conf, nil
}

// DaemonConf is the conf of a daemon or client command: its
// --properties-file, its --conf flags, then the environment. A process
// calls it once: a secret file that SPARKRPC_AUTH_SECRET_FILE names may be
// a pipe, which only the first call can read.
func DaemonConf(propertiesFile string, kvs []string) (*actor.Conf, error) {
	conf, err := PropertiesConf(propertiesFile, kvs)
	if err != nil {
		return nil, err
	}
	if err := applyEnvironment(conf); err != nil {
		return nil, err
	}
	return conf, nil
}

// authSecretCheck fails early, naming the keys, when conf turns
// authentication on without a usable secret.
func authSecretCheck(conf *actor.Conf) error {
	if _, err := netty.AuthSecret(conf); err != nil {
		return fmt.Errorf("%w (or set %s or %s)", err, EnvAuthSecret, EnvAuthSecretFile)
	}
	return nil
}

// InlineSecretFile reads the secret file conf names (a container's is the
// pipe its node manager handed it, which can be read once) into conf, in
// this process's memory only, so that every env the process creates
// authenticates with it.
func InlineSecretFile(conf *actor.Conf) error {
	path, ok := conf.Lookup(netty.KeyAuthenticateSecretFile)
	if !ok || path == "" || conf.Contains(netty.KeyAuthenticateSecret) {
		return nil
	}
	on, err := conf.GetBool(netty.KeyAuthenticate, false)
	if err != nil || !on {
		return err
	}
	secret, err := netty.ReadSecretFile(path)
	if err != nil {
		return err
	}
	conf.Remove(netty.KeyAuthenticateSecretFile)
	conf.Set(netty.KeyAuthenticateSecret, string(secret))
	return nil
}
