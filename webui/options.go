package webui

// This file holds the options every UI takes.

import (
	"net/http"
	"regexp"
	"time"

	"github.com/rs/zerolog"
)

// Option configures a UI handler (NewDriverUI, NewResourceManagerUI,
// NewNodeManagerUI).
type Option interface{ apply(*options) }

type options struct {
	metrics  http.Handler
	secret   string
	verifier string // WithSecretVerifier
	log      zerolog.Logger
	alloc    AllocationSource // WithExecutorAllocation
	base     string           // WithBasePath
	notices  []string         // withNotices
	// redaction is the regex an application's properties are redacted
	// with again (WithRedaction).
	redaction *regexp.Regexp
	// containerLogs reads a node manager's container logs (WithContainerLogs).
	containerLogs ContainerLogReader
	// executorLogs reads a driver's executors' logs (WithExecutorLogs).
	executorLogs ExecutorLogReader
	now          func() time.Time // the clock of the refusals' log limit (tests set it)
	beforeSend   func()           // test hook: runs after a page's snapshot, before it is written
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithMetrics serves h on /metrics (a Prometheus handler for the daemon's
// or env's registry). Without it, /metrics answers 404.
func WithMetrics(h http.Handler) Option { return optionFunc(func(o *options) { o.metrics = h }) }

// WithSecret makes every page, API call and /metrics require secret:
// from scripts as the header "Authorization: Bearer secret", from browsers
// as the password of HTTP Basic (any user name, see User). Refused
// credentials are logged with the UI's logger at most once a minute.
// "" requires nothing. See SecretFromConf.
func WithSecret(secret string) Option { return optionFunc(func(o *options) { o.secret = secret }) }

// WithLogger sets the UI's logger (default: none).
func WithLogger(l zerolog.Logger) Option { return optionFunc(func(o *options) { o.log = l }) }

// WithRedaction makes an application's pages redact its properties again
// with re, the serving process's spark.redaction.regex (RedactionRegex),
// whatever the driver's regex was when it wrote them (default:
// DefaultRedactionRegex). A history server passes its own.
func WithRedaction(re *regexp.Regexp) Option {
	return optionFunc(func(o *options) { o.redaction = re })
}

// withNotices shows notices above the content of an application's pages
// (a history server's: what of the application's log could not be read).
func withNotices(notices []string) Option {
	return optionFunc(func(o *options) { o.notices = notices })
}

// defaultRedaction is DefaultRedactionRegex compiled.
var defaultRedaction = regexp.MustCompile(DefaultRedactionRegex)

func buildOptions(opts []Option) options {
	o := options{log: zerolog.Nop(), now: time.Now, redaction: defaultRedaction}
	for _, opt := range opts {
		opt.apply(&o)
	}
	return o
}

// metricsHandler serves o.metrics, or 404 with a JSON error.
func (o *options) metricsHandler() http.Handler {
	if o.metrics != nil {
		return o.metrics
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusNotFound, "no metrics are served here: this process was started without a metrics registry")
	})
}

// finish wraps a UI's mux with the secret check and the common headers.
func (o *options) finish(mux *http.ServeMux) http.Handler {
	mux.Handle("GET /metrics", o.metricsHandler())
	return requireSecret(o.secret, o.verifier, o.log, o.now, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	}))
}
