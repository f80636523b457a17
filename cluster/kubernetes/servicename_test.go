package kubernetes

import (
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Every driver pod name Kubernetes accepts (a DNS subdomain) gets a
// headless service whose name Kubernetes accepts too: a Service's name is
// a DNS-1035 label, which starts with a letter. A pod's name may start
// with a digit: one given with spark.kubernetes.driver.pod.name or
// spark.kubernetes.executor.podNamePrefix ("2024-etl"), and the default
// one, <prefix>-driver, whose prefix ResourceNamePrefix cuts from the end
// of a long application name. Before, the service of such a pod was
// refused by the API server, and the submission failed once the pod
// existed.
func TestDriverServiceNameOfEveryPodName(t *testing.T) {
	c := &kubeconf.Config{Namespace: "default", AppID: "spark-0123456789abcdef"}
	pods := []string{
		"2024-etl-driver",
		"etl.v2-driver",
		kubeconf.ResourceNamePrefix("nightly-report-"+strings.Repeat("1", 40)) + "-driver",
		strings.Repeat("a.", 40) + "driver",
	}
	for _, pod := range pods {
		if errs := validation.IsDNS1123Subdomain(pod); len(errs) > 0 {
			t.Fatalf("test pod name %q is not a valid pod name: %v", pod, errs)
		}
		svc := driverService(c, pod)
		if errs := validation.IsDNS1035Label(svc.Name); len(errs) > 0 {
			t.Errorf("driver pod %q: service %q: %v", pod, svc.Name, errs)
		}
	}
}
