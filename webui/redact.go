package webui

// This file holds the redaction of configuration values before a page or
// the API shows them (Spark's Utils.redact and spark.redaction.regex).

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

const (
	// KeyRedactionRegex is the regular expression (Go's RE2 syntax) that
	// marks a configuration entry as sensitive when it matches the entry's
	// key or value: its value is then shown as RedactedText.
	KeyRedactionRegex = "spark.redaction.regex"
	// DefaultRedactionRegex is Spark's default of spark.redaction.regex.
	DefaultRedactionRegex = `(?i)secret|password|token|access[.]?key`
	// RedactedText replaces a sensitive value, as in Spark.
	RedactedText = "*********(redacted)"
)

// RedactionRegex returns spark.redaction.regex of conf compiled (default
// DefaultRedactionRegex); an error wraps ErrInvalidConfig and names the
// key.
func RedactionRegex(conf *actor.Conf) (*regexp.Regexp, error) {
	expr := conf.Get(KeyRedactionRegex, DefaultRedactionRegex)
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", ErrInvalidConfig, KeyRedactionRegex, expr, err)
	}
	return re, nil
}

// Redact returns the entries of kv sorted by key, as Spark's [key, value]
// pairs, with the value of each entry whose key or value re matches
// replaced by RedactedText. A nil re redacts every value.
func Redact(re *regexp.Regexp, kv map[string]string) [][2]string {
	out := make([][2]string, 0, len(kv))
	for k, v := range kv {
		if re == nil || re.MatchString(k) || re.MatchString(v) {
			v = RedactedText
		}
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// redactAgain returns props (an EnvironmentUpdate's, redacted where they
// were written) as this UI shows them: the values that re (this UI's
// spark.redaction.regex; nil: every value) matches by key or value, and
// those holding secret, redacted again. A history server thus hides what
// its own regex calls sensitive even where the driver's regex was
// narrower, as Spark's EnvironmentPage redacts again.
func redactAgain(props [][2]string, re *regexp.Regexp, secret string) [][2]string {
	out := make([][2]string, len(props))
	for i, kv := range props {
		if re == nil || re.MatchString(kv[0]) || re.MatchString(kv[1]) || secret != "" && strings.Contains(kv[1], secret) {
			kv[1] = RedactedText
		}
		out[i] = kv
	}
	return out
}

// RedactConf returns conf's entries as a page, or a command's listing,
// shows them: redactConf with conf's own secret, which is thus hidden
// whatever spark.redaction.regex lets through. A bad regex redacts every
// value.
func RedactConf(conf *actor.Conf) [][2]string {
	out, _ := redactConf(conf, conf.Get(KeyAuthenticateSecret, ""))
	return out
}

// redactConf returns conf's entries as the UI shows them: Redact with
// spark.redaction.regex, and whatever that regex lets through, the value
// of spark.authenticate.secret and any value holding secret (the secret
// the UI requires) redacted too. A bad regex redacts every value and
// comes back as the error.
func redactConf(conf *actor.Conf, secret string) ([][2]string, error) {
	re, err := RedactionRegex(conf)
	out := Redact(re, conf.All())
	for i, kv := range out {
		if kv[0] == KeyAuthenticateSecret || secret != "" && strings.Contains(kv[1], secret) {
			out[i][1] = RedactedText
		}
	}
	return out, err
}
