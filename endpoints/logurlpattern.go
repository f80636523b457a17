package endpoints

// This file holds spark.ui.custom.executor.log.url (Spark's
// ExecutorLogUrlHandler): an executor's log URLs built from a pattern and
// the attributes it registered with.

import (
	"maps"
	"regexp"
	"strings"

	"github.com/rs/zerolog"
)

// KeyCustomExecutorLogURL is Spark's spark.ui.custom.executor.log.url: a
// URL pattern whose {{NAME}} parts are replaced by the executor's
// attributes (see ExecutorLogURLs). Unset: executors' own log URLs.
const KeyCustomExecutorLogURL = "spark.ui.custom.executor.log.url"

// AttributeLogFiles is the executor attribute that lists its log files,
// comma-separated ("stderr,stdout"): what {{FILE_NAME}} ranges over.
const AttributeLogFiles = "LOG_FILES"

// logURLPatternPart is one {{NAME}} of a log URL pattern.
var logURLPatternPart = regexp.MustCompile(`\{\{([A-Za-z0-9_\-]+)\}\}`)

// ExecutorLogURLs returns the log URLs of an executor that registered with
// logURLs and attributes, under pattern (Spark's
// spark.ui.custom.executor.log.url; "" keeps logURLs). Every {{NAME}} is
// replaced by attribute NAME. A pattern with {{FILE_NAME}} gives one URL
// per file of the LOG_FILES attribute, keyed by the file's name; one
// without gives one URL keyed "log". When the executor lacks an attribute
// the pattern names (or LOG_FILES for {{FILE_NAME}}), its own logURLs are
// kept and missing says why.
func ExecutorLogURLs(pattern string, logURLs, attributes map[string]string) (urls map[string]string, missing string) {
	if pattern == "" {
		return logURLs, ""
	}
	var lacking []string
	fileName := false
	for _, m := range logURLPatternPart.FindAllStringSubmatch(pattern, -1) {
		name := m[1]
		switch _, ok := attributes[name]; {
		case name == "FILE_NAME":
			fileName = true
			if _, ok := attributes[AttributeLogFiles]; !ok {
				lacking = append(lacking, AttributeLogFiles+" (for FILE_NAME)")
			}
		case !ok || name == AttributeLogFiles:
			lacking = append(lacking, name)
		}
	}
	if len(lacking) > 0 {
		return logURLs, "the executor lacks the attributes " + strings.Join(lacking, ", ")
	}
	url := logURLPatternPart.ReplaceAllStringFunc(pattern, func(part string) string {
		name := part[2 : len(part)-2]
		if name == "FILE_NAME" {
			return part
		}
		return attributes[name]
	})
	if !fileName {
		return map[string]string{"log": url}, ""
	}
	urls = map[string]string{}
	for file := range strings.SplitSeq(attributes[AttributeLogFiles], ",") {
		if file = strings.TrimSpace(file); file != "" {
			urls[file] = strings.ReplaceAll(url, "{{FILE_NAME}}", file)
		}
	}
	return urls, ""
}

// executorLogURLs applies the driver's log URL pattern to an executor
// registering as id, logging when its own URLs are kept.
func executorLogURLs(log zerolog.Logger, pattern, id string, logURLs, attributes map[string]string) map[string]string {
	urls, missing := ExecutorLogURLs(pattern, logURLs, attributes)
	if missing != "" {
		log.Info().Str("executor", id).Msgf("%s is set but %s: its own log URLs are kept", KeyCustomExecutorLogURL, missing)
	}
	return maps.Clone(urls)
}
