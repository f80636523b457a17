package kubernetes

// driverhost.go chooses the address a driver pod advertises to its
// executors: as Spark's, the DNS name of its headless service
// (<service>.<namespace>.svc) where the cluster has DNS, else the pod's IP
// (kubeconf.KeyDriverServiceHost says which; spark.driver.host wins over
// both).

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
)

// resolvConf is the resolver configuration a pod's DNS policy writes.
const resolvConf = "/etc/resolv.conf"

// serviceLookupTimeout bounds the lookup of the service's name.
const serviceLookupTimeout = 2 * time.Second

// driverHostChoice is what chooseDriverHost is given: the key's value, the
// service's DNS name, the pod's IP, whether the resolver searches a cluster
// domain, and how to resolve a name.
type driverHostChoice struct {
	mode, serviceName, podIP string
	clusterSearch            bool
	lookup                   func(name string) ([]string, error)
}

// chooseDriverHost returns the host a driver pod advertises and why: the
// service's name when mode is "true", or "auto" and the resolver searches a
// cluster domain and the name resolves to the pod's IP; otherwise the pod's
// IP. An unknown mode is a configuration error.
func chooseDriverHost(c driverHostChoice) (host, why string, err error) {
	switch c.mode {
	case "true":
		return c.serviceName, kubeconf.KeyDriverServiceHost + "=true", nil
	case "false":
		return c.podIP, kubeconf.KeyDriverServiceHost + "=false", nil
	case "auto":
	default:
		return "", "", kubeconf.Invalid(kubeconf.KeyDriverServiceHost, c.mode, "must be auto, true or false")
	}
	if !c.clusterSearch {
		return c.podIP, "no cluster DNS: the resolver searches no svc.* domain", nil
	}
	addrs, err := c.lookup(c.serviceName)
	if err != nil {
		return c.podIP, "the service's name does not resolve: " + err.Error(), nil
	}
	if !slices.Contains(addrs, c.podIP) {
		return c.podIP, "the service's name resolves to " + strings.Join(addrs, ",") + ", not to the pod's IP", nil
	}
	return c.serviceName, "cluster DNS resolves the service's name to the pod's IP", nil
}

// searchesClusterDomain reports whether the resolver configuration in
// resolv.conf format searches a Kubernetes cluster domain (svc.<domain>, as
// the kubelet writes for pods with the ClusterFirst DNS policy).
func searchesClusterDomain(conf string) bool {
	for line := range strings.Lines(conf) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "search" {
			continue
		}
		for _, d := range f[1:] {
			if strings.HasPrefix(d, "svc.") {
				return true
			}
		}
	}
	return false
}

// driverPodHost chooses, with chooseDriverHost, the host of the driver in
// pod podName (IP podIP) of c's application for the key's value mode.
func driverPodHost(ctx context.Context, c *kubeconf.Config, mode, podName, podIP string) (host, why string, err error) {
	rc, _ := os.ReadFile(resolvConf)
	svc := driverService(c, podName).Name + "." + c.Namespace + ".svc"
	return chooseDriverHost(driverHostChoice{mode: mode, serviceName: svc, podIP: podIP, clusterSearch: searchesClusterDomain(string(rc)),
		lookup: func(name string) ([]string, error) {
			lctx, cancel := context.WithTimeout(ctx, serviceLookupTimeout)
			defer cancel()
			return net.DefaultResolver.LookupHost(lctx, name)
		}})
}
