package kubernetes

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
)

// As for the executors' labels (and as
// Spark requires of spark.kubernetes.driver.label.*), a driver label key
// that Spark reserves is a configuration error. Before, it was silently
// replaced.
func TestDriverReservedLabelIsRefused(t *testing.T) {
	conf := actor.NewConf().Set(kubeconf.KeyContainerImage, "img").Set(kubeconf.KeyDriverLabelPrefix+kubeconf.LabelRole, "etl")
	kcfg, err := kubeconf.Parse(conf, "spark-1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cluster.ParseMaster("k8s://https://127.0.0.1:6443")
	pod, _, _, err := driverPod(cluster.SubmitConfig{Master: m, Class: "SparkPi", Conf: conf}, kcfg, "app-driver", nil)
	if err == nil {
		t.Errorf("driverPod accepted %s%s=etl; the pod's label is %q", kubeconf.KeyDriverLabelPrefix, kubeconf.LabelRole, pod.Labels[kubeconf.LabelRole])
	}
}
