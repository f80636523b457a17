package launcher

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/webui"
)

// submit --verbose lists the conf as Spark does, with the values that
// spark.redaction.regex matches, by key or by value, redacted: a token or
// an access key as well as a secret or a password.
func TestPrintParsedRedacts(t *testing.T) {
	sensitive := map[string]string{
		"spark.authenticate.secret":                           "s3cret-value",
		"spark.kubernetes.authenticate.submission.oauthToken": "tok-123-abc",
		"spark.hadoop.fs.s3a.access.key":                      "AKIAEXAMPLE",
		"spark.ssl.keyPassword":                               "hunter2",
		"spark.jdbc.url":                                      "jdbc:pg://db/x?password=pw-in-value",
	}
	conf := actor.NewConf().Set("spark.plain", "plain-value")
	for k, v := range sensitive {
		conf.Set(k, v)
	}
	var out bytes.Buffer
	printParsed(&out, &submitFlags{class: "SparkPi"}, cluster.Master{}, conf, "", nil)
	for k, v := range sensitive {
		if strings.Contains(out.String(), v) || !strings.Contains(out.String(), "("+k+","+webui.RedactedText+")") {
			t.Errorf("%s is not redacted:\n%s", k, out.String())
		}
	}
	if !strings.Contains(out.String(), "(spark.plain,plain-value)") {
		t.Fatalf("a plain value is hidden:\n%s", out.String())
	}
	conf.Set(webui.KeyRedactionRegex, "(")
	out.Reset()
	printParsed(&out, &submitFlags{class: "SparkPi"}, cluster.Master{}, conf, "", nil)
	if strings.Contains(out.String(), "plain-value") {
		t.Fatalf("with a spark.redaction.regex that does not compile, a value is shown:\n%s", out.String())
	}
}
