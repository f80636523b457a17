package launcher

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/internal/cli"
)

// `sparkrpc executor --conf` takes startup keys, and refuses the secret on
// the command line, where every process of the machine can read it.
func TestExecutorStartupConf(t *testing.T) {
	conf, err := executorStartupConf("", []string{"spark.authenticate=true", "spark.authenticate.secret.file=/run/s/key"})
	if err != nil || conf.Get("spark.authenticate.secret.file", "") != "/run/s/key" || conf.Get("spark.authenticate", "") != "true" {
		t.Fatalf("executorStartupConf = %v, %v", conf, err)
	}
	out, err := execCmd(t, "executor", "--driver-url", "spark://CoarseGrainedScheduler@127.0.0.1:1", "--executor-id", "1",
		"--cores", "1", "--conf", "spark.authenticate=true", "--conf", "spark.authenticate.secret=s3cr3t")
	var ue *cli.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "spark.authenticate.secret.file") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("executor with the secret on its command line: %v\n%s", err, out)
	}
	if _, err := executorStartupConf("", []string{"no-value"}); !errors.As(err, &ue) {
		t.Fatalf("a malformed --conf: %v", err)
	}
}

// An executor registers with the log URLs and attributes its environment
// names, and the log files of its URLs as LOG_FILES.
func TestExecutorLogsAndAttributes(t *testing.T) {
	logs, attrs := executorLogsAndAttributes([]string{"PATH=/bin", "SPARK_LOG_URL_STDOUT=http://nm/stdout",
		"SPARK_LOG_URL_STDERR=http://nm/stderr", "SPARK_EXECUTOR_ATTRIBUTE_KUBERNETES_POD_NAME=app-exec-1",
		"SPARK_EXECUTOR_ATTRIBUTE_EXECUTOR_ID=1", "SPARK_LOG_URL_=x", "SPARK_EXECUTOR_ATTRIBUTE_=y"})
	if !maps.Equal(logs, map[string]string{"stdout": "http://nm/stdout", "stderr": "http://nm/stderr"}) {
		t.Errorf("log URLs = %v", logs)
	}
	if !maps.Equal(attrs, map[string]string{"KUBERNETES_POD_NAME": "app-exec-1", "EXECUTOR_ID": "1", "LOG_FILES": "stderr,stdout"}) {
		t.Errorf("attributes = %v", attrs)
	}
	_, attrs = executorLogsAndAttributes([]string{"SPARK_LOG_URL_LOG=u", "SPARK_EXECUTOR_ATTRIBUTE_LOG_FILES=a,b"})
	if attrs["LOG_FILES"] != "a,b" {
		t.Errorf("an explicit LOG_FILES: %v", attrs)
	}
	if logs, attrs := executorLogsAndAttributes(nil); len(logs) != 0 || len(attrs) != 0 {
		t.Errorf("no environment: %v, %v", logs, attrs)
	}
}
