package cli

import (
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// The log settings travel to the child processes this one starts (the
// application master and executors of an embedded cluster, the containers of
// a node manager) through these environment variables, which the children
// read as the defaults of --log-level and --log-format.
const (
	EnvLogLevel  = "SPARKRPC_LOG_LEVEL"
	EnvLogFormat = "SPARKRPC_LOG_FORMAT"
)

// Log formats of --log-format.
const (
	logFormatAuto    = "auto"
	LogFormatConsole = "console"
	logFormatJSON    = "json"
)

// logLevels are the values of --log-level, in increasing severity.
var logLevels = []string{"trace", "debug", "info", "warn", "error"}

// logSettings are the resolved --log-level and --log-format.
type logSettings struct {
	// level is the level asked for, or NoLevel for each command's own
	// default (warn for submit and the client commands, info for daemons).
	level  zerolog.Level
	format string
}

var (
	logMu  sync.Mutex
	logCfg = logSettings{level: zerolog.NoLevel, format: logFormatAuto}
)

// The values of --log-level and --log-format as given.
var logLevelFlag, logFormatFlag string

// AddLogFlags adds the persistent --log-level and --log-format flags to
// root and resolves them before any subcommand runs.
func AddLogFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&logLevelFlag, "log-level", "", "log `LEVEL`: "+strings.Join(logLevels, ", ")+
		" (default $"+EnvLogLevel+", else warn for submit and the client commands, info for the daemons)")
	pf.StringVar(&logFormatFlag, "log-format", "", "log `FORMAT`: auto (console on a terminal, JSON otherwise), console or json (default $"+EnvLogFormat+", else auto)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return ApplyLogFlags(cmd) }
}

// ApplyLogFlags resolves the log settings of cmd (flag, then environment,
// then default). A command that parses its own flags (submit) calls it again
// once it has.
func ApplyLogFlags(cmd *cobra.Command) error {
	level, format := logLevelFlag, logFormatFlag
	levelFrom, formatFrom := "--log-level", "--log-format"
	if !cmd.Flags().Changed("log-level") {
		level, levelFrom = os.Getenv(EnvLogLevel), "$"+EnvLogLevel
	}
	if !cmd.Flags().Changed("log-format") {
		format, formatFrom = os.Getenv(EnvLogFormat), "$"+EnvLogFormat
	}
	s, err := parseLogSettings(level, levelFrom, format, formatFrom)
	if err != nil {
		return err
	}
	logMu.Lock()
	logCfg = s
	logMu.Unlock()
	// Children (containers started by this process or by the node
	// managers it embeds) log the same way.
	if level != "" {
		os.Setenv(EnvLogLevel, level)
	}
	if format != "" {
		os.Setenv(EnvLogFormat, format)
	}
	return nil
}

// parseLogSettings checks a log level and format, which came from levelFrom
// and formatFrom (named in the error); an empty value means the default.
func parseLogSettings(level, levelFrom, format, formatFrom string) (logSettings, error) {
	s := logSettings{level: zerolog.NoLevel, format: logFormatAuto}
	if l := strings.ToLower(strings.TrimSpace(level)); l != "" {
		zl, err := zerolog.ParseLevel(l)
		if err != nil || !slices.Contains(logLevels, l) {
			return s, Usagef("invalid log level %q in %s: give one of %s", level, levelFrom, strings.Join(logLevels, ", "))
		}
		s.level = zl
	}
	switch f := strings.ToLower(strings.TrimSpace(format)); f {
	case "":
	case logFormatAuto, LogFormatConsole, logFormatJSON:
		s.format = f
	default:
		return s, Usagef("invalid log format %q in %s: give auto, console or json", format, formatFrom)
	}
	return s, nil
}

var timeFormatOnce sync.Once

// NewLogger returns the logger of a command on w, with the field
// process=component. level is the command's default; --log-level replaces
// it. The format is --log-format's: console (human-readable) on a terminal
// or when asked for, JSON otherwise.
func NewLogger(w io.Writer, level zerolog.Level, component string) zerolog.Logger {
	timeFormatOnce.Do(func() { zerolog.TimeFieldFormat = time.RFC3339Nano })
	logMu.Lock()
	s := logCfg
	logMu.Unlock()
	if s.level != zerolog.NoLevel {
		level = s.level
	}
	out := w
	if s.format == LogFormatConsole || s.format == logFormatAuto && IsTerminal(w) {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000", NoColor: true}
	}
	return zerolog.New(out).Level(level).With().Timestamp().Str("process", component).Logger()
}
