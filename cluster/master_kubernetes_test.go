package cluster_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
)

func TestParseMasterKubernetes(t *testing.T) {
	cases := []struct {
		name, in, server string
	}{
		{"https", "k8s://https://kube.example.com:6443", "https://kube.example.com:6443"},
		{"no scheme means https", "k8s://kube.example.com:6443", "https://kube.example.com:6443"},
		{"http", "k8s://http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"no port", "k8s://https://kube.example.com", "https://kube.example.com"},
		{"ipv6", "k8s://[::1]:6443", "https://[::1]:6443"},
		{"trailing slash", "k8s://https://10.0.0.1:443/", "https://10.0.0.1:443"},
		{"path prefix", "k8s://https://proxy.example.com/kube", "https://proxy.example.com/kube"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := cluster.ParseMaster(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != cluster.MasterKubernetes || m.APIServer != tc.server || m.String() != tc.in {
				t.Fatalf("ParseMaster(%q) = %+v, want server %s", tc.in, m, tc.server)
			}
		})
	}
	for _, bad := range []string{"k8s://", "k8s://ftp://host:1", "k8s://https://", "k8s://host:99999", "k8s://host:x",
		"k8s://https://user:pw@host:6443", "k8s://host:6443?a=b", "k8s:/host:6443"} {
		t.Run("bad "+bad, func(t *testing.T) {
			m, err := cluster.ParseMaster(bad)
			if !errors.Is(err, cluster.ErrInvalidMaster) {
				t.Fatalf("ParseMaster(%q) = %+v, %v; want ErrInvalidMaster", bad, m, err)
			}
		})
	}
}
