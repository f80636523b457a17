package endpoints_test

import (
	"context"
	"maps"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/messages"
)

func TestExecutorLogURLs(t *testing.T) {
	own := map[string]string{"stdout": "http://nm:8042/stdout", "stderr": "http://nm:8042/stderr"}
	k8s := map[string]string{"APP_ID": "spark-1", "EXECUTOR_ID": "3", "HOSTNAME": "10.0.0.7",
		"KUBERNETES_NAMESPACE": "ns", "KUBERNETES_POD_NAME": "app-exec-3"}
	withFiles := maps.Clone(k8s)
	withFiles[endpoints.AttributeLogFiles] = "stderr,stdout"
	tests := []struct {
		name, pattern string
		attrs         map[string]string
		want          map[string]string
		missing       bool
	}{
		{name: "no pattern keeps the executor's", attrs: k8s, want: own},
		{name: "every Kubernetes attribute",
			pattern: "https://logs/{{KUBERNETES_NAMESPACE}}/{{KUBERNETES_POD_NAME}}?app={{APP_ID}}&id={{EXECUTOR_ID}}&h={{HOSTNAME}}",
			attrs:   k8s,
			want:    map[string]string{"log": "https://logs/ns/app-exec-3?app=spark-1&id=3&h=10.0.0.7"}},
		{name: "a pattern naming an attribute twice", pattern: "x/{{EXECUTOR_ID}}/{{EXECUTOR_ID}}", attrs: k8s,
			want: map[string]string{"log": "x/3/3"}},
		{name: "one URL per log file", pattern: "https://logs/{{KUBERNETES_POD_NAME}}/{{FILE_NAME}}", attrs: withFiles,
			want: map[string]string{"stderr": "https://logs/app-exec-3/stderr", "stdout": "https://logs/app-exec-3/stdout"}},
		{name: "FILE_NAME without LOG_FILES keeps the executor's", pattern: "https://logs/{{FILE_NAME}}", attrs: k8s,
			want: own, missing: true},
		{name: "a missing attribute keeps the executor's", pattern: "https://logs/{{CONTAINER_ID}}", attrs: k8s,
			want: own, missing: true},
		{name: "LOG_FILES itself is not substituted", pattern: "https://logs/{{LOG_FILES}}", attrs: withFiles,
			want: own, missing: true},
		{name: "no attributes at all", pattern: "https://logs/{{EXECUTOR_ID}}", want: own, missing: true},
		{name: "a pattern without parts", pattern: "https://logs/all", want: map[string]string{"log": "https://logs/all"}},
		{name: "braces that are no part stay", pattern: "https://logs/{{not a part}}/{{EXECUTOR_ID}}", attrs: k8s,
			want: map[string]string{"log": "https://logs/{{not a part}}/3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := endpoints.ExecutorLogURLs(tt.pattern, own, tt.attrs)
			if !maps.Equal(got, tt.want) || (missing != "") != tt.missing {
				t.Fatalf("ExecutorLogURLs(%q) = %v, %q; want %v (missing: %v)", tt.pattern, got, missing, tt.want, tt.missing)
			}
		})
	}
}

// The driver builds a registering executor's log URLs from
// spark.ui.custom.executor.log.url and publishes its attributes.
func TestDriverAppliesCustomExecutorLogURL(t *testing.T) {
	nw := memNetwork()
	c := startCluster(t, nw, testConf(endpoints.KeyCustomExecutorLogURL, "https://logs/{{KUBERNETES_POD_NAME}}"), 0, 1)
	attrs := map[string]string{"KUBERNETES_POD_NAME": "app-exec-9", "EXECUTOR_ID": "9"}
	register := func(id string, attrs map[string]string) {
		t.Helper()
		f := newFakeExecutor(t, nw, c.Driver.URL())
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := actor.AskAs[*messages.BoolReply](ctx, f.driver, &messages.RegisterExecutor{ExecutorId: id,
			ExecutorRef: f.ref.Proto(), Hostname: "h", Cores: 1, LogUrls: map[string]string{"stdout": "own"},
			Attributes: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	register("9", attrs)
	register("10", nil)
	evs := c.rec.waitFor(t, "2 ExecutorAdded", func(evs []endpoints.Event) bool {
		return countEvents[endpoints.ExecutorAdded](evs, nil) == 2
	})
	for _, ev := range evs {
		a, ok := ev.(endpoints.ExecutorAdded)
		if !ok {
			continue
		}
		want, wantAttrs := map[string]string{"stdout": "own"}, map[string]string(nil)
		if a.ExecutorID == "9" {
			want, wantAttrs = map[string]string{"log": "https://logs/app-exec-9"}, attrs
		}
		if !maps.Equal(a.LogURLs, want) || !maps.Equal(a.Attributes, wantAttrs) {
			t.Errorf("ExecutorAdded %s: LogURLs %v, Attributes %v; want %v, %v", a.ExecutorID, a.LogURLs, a.Attributes, want, wantAttrs)
		}
	}
	if ex, ok := executor(c.Driver, "9"); !ok || ex.LogURLs["log"] != "https://logs/app-exec-9" || ex.Attributes["EXECUTOR_ID"] != "9" {
		t.Errorf("Executors: %+v", ex)
	}
}
