package cluster_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

func TestHistoryURL(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"", ""},
		{"hs:18080", "http://hs:18080/history/application_1_0001/"},
		{"https://hs.example.com/spark/", "https://hs.example.com/spark/history/application_1_0001/"},
	} {
		conf := actor.NewConf()
		if c.addr != "" {
			conf.Set(cluster.KeyHistoryServerAddress, c.addr)
		}
		if got := cluster.HistoryURL(conf, "application_1_0001"); got != c.want {
			t.Errorf("HistoryURL(%q) = %q, want %q", c.addr, got, c.want)
		}
	}
}
