package kubernetes

// redaction.go says which configuration keys are sensitive (Spark's
// spark.redaction.regex), so that none of them reaches a pod's arguments.

import (
	"regexp"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

const (
	// KeyRedactionRegex is Spark's spark.redaction.regex: configuration keys
	// it matches are sensitive and are never passed to a pod's arguments
	// (DefaultRedactionRegex is always applied as well).
	KeyRedactionRegex = "spark.redaction.regex"
	// DefaultRedactionRegex is Spark's default of spark.redaction.regex.
	DefaultRedactionRegex = `(?i)secret|password|token|access[.]?key`
)

var defaultRedaction = regexp.MustCompile(DefaultRedactionRegex)

// redactor tells sensitive configuration keys: those spark.redaction.regex
// or its default match. A key naming a file (ending in "file", as
// spark.authenticate.secret.file or ...oauthTokenFile) holds a path, not a
// secret, and is not sensitive.
type redactor struct{ res []*regexp.Regexp }

func newRedactor(conf *actor.Conf) (*redactor, error) {
	r := &redactor{res: []*regexp.Regexp{defaultRedaction}}
	if s, ok := conf.Lookup(KeyRedactionRegex); ok && s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, badConf(KeyRedactionRegex, s, "not a regular expression: "+err.Error())
		}
		r.res = append(r.res, re)
	}
	return r, nil
}

func (r *redactor) sensitive(key string) bool {
	if strings.HasSuffix(strings.ToLower(key), "file") {
		return false
	}
	for _, re := range r.res {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}
