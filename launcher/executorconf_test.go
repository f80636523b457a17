package launcher

import (
	"errors"
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
