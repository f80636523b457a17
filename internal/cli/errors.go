package cli

import (
	"fmt"
	"strings"
)

// UsageError marks a command-line mistake: the program prints the usage
// line and exits 1 for it, as spark-submit does.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitError carries an exit code chosen by a command (e.g. a failed
// application's).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UserMessage is err's text for the command line: one "PROGRAM: " prefix
// is enough, so the library's package prefix goes.
func UserMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "cluster: ")
}

// IsCobraUsageError reports whether err is one of cobra's own argument errors
// (unknown command, wrong number of arguments), which are usage mistakes.
func IsCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
