package kubernetes

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
)

func TestChooseDriverHost(t *testing.T) {
	resolves := func(addrs ...string) func(string) ([]string, error) {
		return func(string) ([]string, error) { return addrs, nil }
	}
	fails := func(string) ([]string, error) { return nil, errors.New("no such host") }
	const svc, ip = "app-driver-svc.ns.svc", "10.1.2.3"
	for _, tc := range []struct {
		name, mode    string
		clusterSearch bool
		lookup        func(string) ([]string, error)
		want          string
	}{
		{"auto with cluster DNS", "auto", true, resolves(ip), svc},
		{"auto without a cluster search domain", "auto", false, resolves(ip), ip},
		{"auto, the name does not resolve", "auto", true, fails, ip},
		{"auto, the name resolves elsewhere", "auto", true, resolves("10.9.9.9"), ip},
		{"true", "true", false, fails, svc},
		{"false", "false", true, resolves(ip), ip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why, err := chooseDriverHost(driverHostChoice{mode: tc.mode, serviceName: svc, podIP: ip, clusterSearch: tc.clusterSearch, lookup: tc.lookup})
			if err != nil || got != tc.want || why == "" {
				t.Fatalf("= %q (%q), %v; want %q", got, why, err, tc.want)
			}
		})
	}
	if _, _, err := chooseDriverHost(driverHostChoice{mode: "yes"}); !errors.Is(err, kubeconf.ErrInvalidConfig) {
		t.Fatalf("mode yes: %v", err)
	}
}

func TestSearchesClusterDomain(t *testing.T) {
	for conf, want := range map[string]bool{
		"search ns.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.0.0.10\noptions ndots:5\n": true,
		"nameserver 127.0.0.53\nsearch example.com\n":                                                          false,
		"": false,
	} {
		if got := searchesClusterDomain(conf); got != want {
			t.Errorf("%q: %v, want %v", conf, got, want)
		}
	}
}
