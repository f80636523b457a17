package webui

// This file holds the UI's configuration keys and StartDriverUI, which
// starts the driver's UI as they say.

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/netty"
)

const (
	// KeyUIEnabled turns the driver's web UI on or off (default true).
	KeyUIEnabled = "spark.ui.enabled"
	// KeyUIPort is the driver UI's first port (default 4040; 0: a free port).
	KeyUIPort = "spark.ui.port"
	// KeyPortMaxRetries is how many successive ports a UI tries after a
	// port in use (default 16), as for every sparkrpc server.
	KeyPortMaxRetries = netty.KeyPortMaxRetries
	// KeyAuthenticate, when true, makes every UI require the shared
	// secret: as a bearer token, or as the password of HTTP Basic.
	KeyAuthenticate = netty.KeyAuthenticate
	// KeyAuthenticateSecret is the shared secret.
	KeyAuthenticateSecret = netty.KeyAuthenticateSecret
	// KeyAuthenticateSecretFile names a file (mode 0600) or pipe holding
	// the shared secret, read when KeyAuthenticateSecret is not set.
	KeyAuthenticateSecretFile = netty.KeyAuthenticateSecretFile
	// KeyDriverUIAddress is set by StartDriverUI to the UI's URL (Spark's
	// spark.driver.appUIAddress); an application master registers it as the
	// application's tracking URL.
	KeyDriverUIAddress = "spark.driver.appUIAddress"
	// KeyAppID is the application's id; the driver UI reads it when its
	// AppInfo has none (the id is given after the driver starts).
	KeyAppID = "spark.app.id"
)

// Default ports of the UIs.
const (
	DefaultDriverUIPort          = 4040
	DefaultResourceManagerUIPort = 8088
	DefaultNodeManagerUIPort     = 8042
)

// MaxRetries returns spark.port.maxRetries of conf (default 16), as
// netty.PortMaxRetries reads it; an unusable value is an error matching
// both ErrInvalidConfig and the *actor.ConfError naming the key.
func MaxRetries(conf *actor.Conf) (int, error) {
	n, err := netty.PortMaxRetries(conf)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return n, nil
}

// CheckDriverConf checks the keys that place the driver's UI
// (spark.ui.enabled, spark.ui.port, spark.port.maxRetries), so that a
// submission with a malformed one fails before anything starts rather than
// run without its UI. The error names the key.
func CheckDriverConf(conf *actor.Conf) error {
	_, _, _, err := driverUIConf(conf)
	return err
}

// driverUIConf returns whether the driver's UI is on, its first port and
// how many ports up it may move.
func driverUIConf(conf *actor.Conf) (on bool, port, retries int, err error) {
	if on, err = conf.GetBool(KeyUIEnabled, true); err != nil || !on {
		return false, 0, 0, err
	}
	if port, err = conf.GetInt(KeyUIPort, DefaultDriverUIPort); err != nil {
		return false, 0, 0, err
	}
	if port < 0 || port > 65535 {
		return false, 0, 0, fmt.Errorf("%w: %s must be between 0 (a free port) and 65535, not %d", ErrInvalidConfig, KeyUIPort, port)
	}
	if retries, err = MaxRetries(conf); err != nil {
		return false, 0, 0, err
	}
	return on, port, retries, nil
}

// StartDriverUI starts driver d's UI as the driver's configuration (d's
// env's conf) says: nothing (nil, nil) with spark.ui.enabled=false; else a
// DriverUI on host, first port spark.ui.port, moving up as
// spark.port.maxRetries allows, requiring the shared secret when
// spark.authenticate is on (or the one KeyUISecretVerifier verifies), and serving the driver's metrics on /metrics
// (opts may replace them). advertise is the host of its URL. It sets
// spark.driver.appUIAddress in d's conf to the UI's URL. Stop it with
// Shutdown.
func StartDriverUI(d *endpoints.Driver, app AppInfo, host, advertise string, log zerolog.Logger, opts ...Option) (*Server, error) {
	conf := d.Env().Conf()
	on, port, retries, err := driverUIConf(conf)
	if err != nil || !on {
		return nil, err
	}
	secret, err := SecretFromConf(conf)
	if err != nil {
		return nil, err
	}
	verifier, err := SecretVerifierFromConf(conf)
	if err != nil {
		return nil, err
	}
	opts = append([]Option{WithSecret(secret), WithSecretVerifier(verifier), WithLogger(log), WithMetrics(d.MetricsHandler())}, opts...)
	s, err := Start("SparkUI", NewDriverUI(d, app, opts...), host, advertise, port, retries, log)
	if err != nil {
		return nil, err
	}
	conf.Set(KeyDriverUIAddress, s.URL())
	return s, nil
}
