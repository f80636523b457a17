// The options that configure an Env (WithTransport, WithLogger, ...).

package actor

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// An Option configures an Env. Options are built only by this package's
// With functions, as netty.Option is by netty's.
type Option interface{ apply(*envOptions) }

type optionFunc func(*envOptions)

func (f optionFunc) apply(o *envOptions) { f(o) }

type envOptions struct {
	transport   Transport
	logger      *zerolog.Logger
	usableCores int
	onDrop      func(name string, msg proto.Message)
	metrics     *prometheus.Registry
}

// WithTransport connects the env to other envs through t. Without it the env
// is purely local.
func WithTransport(t Transport) Option { return optionFunc(func(o *envOptions) { o.transport = t }) }

// WithLogger sets the env's logger. The default, zerolog.Nop(), logs nothing.
func WithLogger(l zerolog.Logger) Option { return optionFunc(func(o *envOptions) { o.logger = &l }) }

// WithNumUsableCores sets the core count that sizes the shared message loop
// when spark.rpc.netty.dispatcher.numThreads is unset (default GOMAXPROCS).
func WithNumUsableCores(n int) Option { return optionFunc(func(o *envOptions) { o.usableCores = n }) }

// WithDropHandler sets a function told of every message that was dropped
// because its endpoint had stopped (Spark's Inbox.onDrop). It runs on the
// goroutine that noticed the drop and must not block.
func WithDropHandler(fn func(name string, msg proto.Message)) Option {
	return optionFunc(func(o *envOptions) { o.onDrop = fn })
}
