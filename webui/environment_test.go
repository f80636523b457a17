package webui_test

import (
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/webui"
)

// Sensitive configuration values appear on no page and in no API answer:
// the environment page and its API list the driver's configuration with
// the values that spark.redaction.regex matches (by key or by value), the
// secret's key and any value holding the secret shown as Spark shows them.
func TestEnvironmentRedactsSecrets(t *testing.T) {
	c := startCluster(t, 1, 1)
	const secret = "s3cret-value-1"
	sensitive := map[string]string{
		webui.KeyAuthenticateSecret:      secret,
		"spark.authenticate.secret.file": "/run/secrets/spark-secret-file",
		"spark.hadoop.fs.s3a.access.key": "AKIAEXAMPLEKEY",
		"spark.hadoop.fs.s3a.accesskey":  "AKIASECONDKEY",
		"spark.hadoop.fs.s3a.secret.key": "wJalrXUtnFEMIK",
		"spark.ssl.keyPassword":          "hunter2",
		"spark.kubernetes.token":         "tok-123-abc",
		"spark.jdbc.url":                 "jdbc:pg://db/x?user=a&Password=pw-in-value",
		"spark.copy.of.the.secret":       "prefix-" + secret,
	}
	conf := c.Driver.Env().Conf()
	for k, v := range sensitive {
		conf.Set(k, v)
	}
	conf.Set("spark.plain.setting", "plain-visible-value")
	url := newDriverUI(t, c, webui.WithSecret(secret))

	code, page := get(t, url+"/environment/", secret)
	if code != http.StatusOK {
		t.Fatalf("environment page: %d %q", code, page)
	}
	var env struct {
		Runtime         map[string]string `json:"runtime"`
		SparkProperties [][2]string       `json:"sparkProperties"`
	}
	code, body := get(t, url+"/api/v1/applications/"+testApp+"/environment", secret)
	if code != http.StatusOK || json.Unmarshal([]byte(body), &env) != nil {
		t.Fatalf("environment API: %d %q", code, body)
	}
	got := map[string]string{}
	for _, kv := range env.SparkProperties {
		got[kv[0]] = kv[1]
	}
	for k := range sensitive {
		if got[k] != webui.RedactedText {
			t.Errorf("API: %s = %q, want %q", k, got[k], webui.RedactedText)
		}
		row := `data-key="` + k + `"><td>` + k + `</td><td>` + html.EscapeString(webui.RedactedText) + `</td>`
		if !strings.Contains(page, row) {
			t.Errorf("page: no row %s", row)
		}
	}
	if got["spark.plain.setting"] != "plain-visible-value" || !strings.Contains(page, "plain-visible-value") || env.Runtime["goVersion"] == "" {
		t.Fatalf("a plain setting or the runtime is not shown: %v\n%s", env, page)
	}
	// No page or API answer holds a sensitive value.
	paths := []string{"/jobs/", "/executors/", "/endpoints/", "/environment/", "/api/v1/applications",
		"/api/v1/applications/" + testApp, "/api/v1/applications/" + testApp + "/executors",
		"/api/v1/applications/" + testApp + "/allexecutors", "/api/v1/applications/" + testApp + "/jobs",
		"/api/v1/applications/" + testApp + "/environment"}
	for _, p := range paths {
		code, body := get(t, url+p, secret)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %q", p, code, body)
		}
		for k, v := range sensitive {
			if strings.Contains(body, v) || strings.Contains(body, html.EscapeString(v)) {
				t.Errorf("%s shows the value of %s", p, k)
			}
		}
	}
}

// spark.redaction.regex replaces the default; the secret's key stays
// hidden whatever it says, and a regex that does not compile hides every
// value and names the key.
func TestEnvironmentRedactionRegex(t *testing.T) {
	c := startCluster(t, 1, 1)
	conf := c.Driver.Env().Conf()
	conf.Set(webui.KeyRedactionRegex, "(?i)custom")
	conf.Set("spark.my.CUSTOM.thing", "hidden-by-custom")
	conf.Set(webui.KeyAuthenticateSecret, "still-hidden")
	url := newDriverUI(t, c)
	_, page := get(t, url+"/environment/", "")
	for _, v := range []string{"hidden-by-custom", "still-hidden"} {
		if strings.Contains(page, v) {
			t.Fatalf("the page shows %q:\n%s", v, page)
		}
	}
	conf.Set(webui.KeyRedactionRegex, "(")
	conf.Set("spark.plain.setting", "plain-visible-value")
	code, page := get(t, url+"/environment/", "")
	if code != http.StatusOK || strings.Contains(page, "plain-visible-value") || !strings.Contains(page, webui.KeyRedactionRegex) {
		t.Fatalf("with a bad regex: %d\n%s", code, page)
	}
	wantJSONError(t, url+"/api/v1/applications/"+testApp+"/environment", http.StatusInternalServerError, webui.KeyRedactionRegex)
}

func TestRedact(t *testing.T) {
	re := regexp.MustCompile(webui.DefaultRedactionRegex)
	got := webui.Redact(re, map[string]string{"b.token": "x", "a": "Secret in the value", "c": "plain", "d.accessKey": "y"})
	want := [][2]string{{"a", webui.RedactedText}, {"b.token", webui.RedactedText}, {"c", "plain"}, {"d.accessKey", webui.RedactedText}}
	if len(got) != len(want) {
		t.Fatalf("Redact = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Redact = %v, want %v", got, want)
		}
	}
	if got := webui.Redact(nil, map[string]string{"a": "b"}); got[0][1] != webui.RedactedText {
		t.Fatalf("Redact(nil) = %v, want every value hidden", got)
	}
}

func TestRedactionRegexInvalid(t *testing.T) {
	conf := actor.NewConf().Set(webui.KeyRedactionRegex, "[")
	if _, err := webui.RedactionRegex(conf); !errors.Is(err, webui.ErrInvalidConfig) || !strings.Contains(err.Error(), webui.KeyRedactionRegex) {
		t.Fatalf("RedactionRegex([) = %v, want ErrInvalidConfig naming the key", err)
	}
}
