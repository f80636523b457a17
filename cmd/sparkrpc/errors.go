package main

import "strings"

// userMessage is err's text for the command line: one "sparkrpc: " prefix
// is enough, so the library's package prefix goes.
func userMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "cluster: ")
}

// isCobraUsageError reports whether err is one of cobra's own argument errors
// (unknown command, wrong number of arguments), which are usage mistakes.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
