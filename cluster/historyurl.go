package cluster

// This file holds the address of an application's pages on a history
// server, which a resource manager shows as its tracking URL once it has
// ended.

import (
	"net/url"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

// HistoryURL returns the page of application appID on the history server
// that conf names (KeyHistoryServerAddress): "http://ADDRESS/history/APP_ID/"
// as Spark's application master builds it, the address taken as it is when
// it has a scheme. It returns "" when the key is not set.
func HistoryURL(conf *actor.Conf, appID string) string {
	addr := strings.TrimRight(strings.TrimSpace(conf.Get(KeyHistoryServerAddress, "")), "/")
	if addr == "" || appID == "" {
		return ""
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return addr + "/history/" + url.PathEscape(appID) + "/"
}
