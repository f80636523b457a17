// The options of NewTransport and NewEnv.

package netty

import (
	"math/rand/v2"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
)

// An Option configures a Transport (and, through NewEnv, its env).
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

type options struct {
	bindHost      string
	advertiseHost string
	port          int
	clientMode    bool
	logger        *zerolog.Logger
	envOpts       []actor.Option
	inlineQuiet   *time.Duration // tests: instead of defaultInlineQuiet
	authKeys      func(keyID string) (secret []byte, ok bool)
	network       Network    // WithNetwork; nil: the operating system's TCP
	lockRelease   func()     // WithLockRelease
	rand          *rand.Rand // WithRand; nil: the process's source
}

// DefaultBindHost is the host a server binds to unless WithBindHost says
// otherwise: loopback, so that nothing is exposed by accident.
const DefaultBindHost = "127.0.0.1"

// WithBindHost sets the host or IP the server listens on (default
// DefaultBindHost). "0.0.0.0" or "::" listen on every interface; the
// advertised host should then be set with WithAdvertiseHost.
func WithBindHost(host string) Option { return optionFunc(func(o *options) { o.bindHost = host }) }

// WithAdvertiseHost sets the host that peers use to reach this env: its
// identity and the host of its RpcAddress (default: the bind host, or the
// machine's hostname when the bind host is 0.0.0.0 or ::). Spark's
// advertiseAddress.
func WithAdvertiseHost(host string) Option {
	return optionFunc(func(o *options) { o.advertiseHost = host })
}

// WithPort sets the port to listen on (default 0, a random free port). A
// taken port is retried on port+1, up to spark.port.maxRetries times.
func WithPort(port int) Option { return optionFunc(func(o *options) { o.port = port }) }

// WithClientMode makes the transport not listen (Spark's clientMode): its
// identity is a client id derived from a key it makes at Start and proves
// in every handshake (so no other peer can claim it), its endpoints are
// spark-client://name, and peers reach it only over the connections it
// opened.
func WithClientMode() Option { return optionFunc(func(o *options) { o.clientMode = true }) }

// WithLogger sets the logger of the transport (and of the env, with
// NewEnv). The default is the env's logger.
func WithLogger(l zerolog.Logger) Option { return optionFunc(func(o *options) { o.logger = &l }) }

// WithEnvOptions passes options to actor.NewEnv; only NewEnv uses them.
func WithEnvOptions(opts ...actor.Option) Option {
	return optionFunc(func(o *options) { o.envOpts = append(o.envOpts, opts...) })
}

// WithAuthKeys lets an acceptor with spark.authenticate on accept secrets
// besides its own: a dialer that names a non-empty key id
// (spark.authenticate.keyId) must prove the secret that keys resolves it to.
// An id keys does not know (ok false, or an empty secret) fails the
// handshake like a wrong secret, with ErrAuthFailed and without telling the
// dialer which; the empty id always names the env's own secret
// (AuthSecret). keys is called once per handshake that names an id, from
// the goroutine serving the connection, and must be safe for concurrent
// use. Transport.PeerKeyID tells which id a connection used.
func WithAuthKeys(keys func(keyID string) (secret []byte, ok bool)) Option {
	return optionFunc(func(o *options) { o.authKeys = keys })
}
