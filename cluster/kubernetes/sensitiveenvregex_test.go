package kubernetes

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/webui"
)

// README: spark.executorEnv.NAME and spark.kubernetes.driverEnv.NAME are
// "refused when spark.redaction.regex matches the key". A variable that
// holds no secret but whose name has TOKEN, SECRET or PASSWORD in it
// (Hadoop's HADOOP_TOKEN_FILE_LOCATION, a path) is then set by giving a
// regex that does not match it. Before, submit refused it whatever
// spark.redaction.regex said: Spark's default was applied on top of it.
func TestSensitiveEnvFollowsTheRedactionRegex(t *testing.T) {
	conf := actor.NewConf().
		Set(webui.KeyRedactionRegex, "(?i)password").
		Set(kubeconf.KeyExecutorEnvPrefix+"HADOOP_TOKEN_FILE_LOCATION", "/var/run/hadoop/token")
	if err := refuseSensitiveEnv(conf); err != nil {
		t.Errorf("with %s=(?i)password: %v", webui.KeyRedactionRegex, err)
	}
	conf.Set(kubeconf.KeyExecutorEnvPrefix+"DB_PASSWORD", "hunter2")
	if err := refuseSensitiveEnv(conf); err == nil {
		t.Error("a key the regex matches was not refused")
	}
	if err := refuseSensitiveEnv(actor.NewConf().Set(kubeconf.KeyDriverEnvPrefix+"API_TOKEN", "x")); err == nil {
		t.Error("a key the default regex matches was not refused")
	}
}
