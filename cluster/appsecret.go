package cluster

// This file holds the application's secret (spark.authenticate on a
// resource manager): its generation, the keys a configuration must not
// carry into a file, and the resource manager's table of live applications'
// secrets that authenticates their application masters.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// GenerateSecret returns a new application secret: 32 random bytes from
// crypto/rand, hex-encoded (what Spark on YARN generates for every
// application when spark.authenticate is on).
func GenerateSecret() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	out := make([]byte, hex.EncodedLen(len(b)))
	hex.Encode(out, b)
	return out, nil
}

// AuthOn reports whether conf turns spark.authenticate on.
func AuthOn(conf *actor.Conf) bool {
	on, _ := conf.GetBool(netty.KeyAuthenticate, false)
	return on
}

// secretKeys are the keys that say where an env's secret comes from: a
// configuration that leaves the process (a staged file, a container's
// conf, an executor's SparkAppConfig) never carries them; the receiver gets
// its own.
var secretKeys = []string{netty.KeyAuthenticateSecret, netty.KeyAuthenticateSecretFile, netty.KeyAuthenticateKeyID}

// WithoutSecrets returns a copy of conf without secretKeys.
func WithoutSecrets(conf map[string]string) map[string]string {
	out := make(map[string]string, len(conf))
	for k, v := range conf {
		out[k] = v
	}
	for _, k := range secretKeys {
		delete(out, k)
	}
	return out
}

// ContainerAuthConf returns conf (without secretKeys) for a container that
// gets its application's secret on the pipe of ContainerSecretFile, and,
// when keyID is not empty, presents keyID when it dials.
func ContainerAuthConf(conf map[string]string, keyID string) map[string]string {
	out := WithoutSecrets(conf)
	out[netty.KeyAuthenticate] = "true"
	out[netty.KeyAuthenticateSecretFile] = ContainerSecretFile
	if keyID != "" {
		out[netty.KeyAuthenticateKeyID] = keyID
	}
	return out
}

// AppKeys holds the secrets of a resource manager's live applications by
// application id. Its Lookup is the resolver the resource manager's env
// authenticates key ids with (netty.WithAuthKeys): an application master
// dials with its application id as key id and the application's secret.
// It is safe for concurrent use.
type AppKeys struct {
	m sync.Map // app id -> []byte
}

// NewAppKeys returns an empty table.
func NewAppKeys() *AppKeys { return &AppKeys{} }

// Lookup returns the secret of the live application appID.
func (k *AppKeys) Lookup(appID string) ([]byte, bool) {
	if k == nil || appID == "" {
		return nil, false
	}
	v, ok := k.m.Load(appID)
	if !ok {
		return nil, false
	}
	return v.([]byte), true
}

func (k *AppKeys) Set(appID string, secret []byte) { k.m.Store(appID, secret) }

func (k *AppKeys) Forget(appID string) { k.m.Delete(appID) }

// SetSecret makes secret the one conf gives, in place of every key that
// said where a secret came from.
func SetSecret(conf *actor.Conf, secret []byte) {
	for _, k := range secretKeys {
		conf.Remove(k)
	}
	conf.Set(netty.KeyAuthenticateSecret, string(secret))
}

// PropertiesText renders conf as a properties file, keys sorted, that
// actor.Conf.LoadProperties reads back to the same pairs.
func PropertiesText(conf map[string]string) []byte {
	var b bytes.Buffer
	_ = actor.StoreProperties(&b, conf) // a bytes.Buffer does not fail
	return b.Bytes()
}
