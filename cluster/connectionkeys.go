package cluster

// This file holds the keys an executor must share with its driver before
// it can connect to it.

import "strings"

// IsConnectionKey reports whether key is one an executor must agree on with
// its driver before it can connect (spark.auth*, spark.network.*,
// spark.rpc.*, spark.ssl.*): the configuration it is started with, before
// it fetches the rest from the driver.
func IsConnectionKey(key string) bool {
	for _, prefix := range []string{"spark.auth", "spark.network.", "spark.rpc.", "spark.ssl."} {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}
