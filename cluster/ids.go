package cluster

// This file holds the application and container ids, YARN's format.

import (
	"fmt"
	"strconv"
	"strings"
)

// AppID formats an application id the way YARN does:
// application_<clusterTimestamp>_<sequence>, the sequence zero-padded to 4.
func AppID(clusterTimestamp int64, seq int) string {
	return fmt.Sprintf("application_%d_%04d", clusterTimestamp, seq)
}

// ParseAppID splits an application id into its cluster timestamp and sequence.
func ParseAppID(id string) (clusterTimestamp int64, seq int, err error) {
	parts := strings.Split(id, "_")
	if len(parts) != 3 || parts[0] != "application" {
		return 0, 0, fmt.Errorf("%w: invalid application id %q (expected application_<timestamp>_<sequence>)", ErrUnknownApplication, id)
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	n, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || ts < 0 || n < 0 {
		return 0, 0, fmt.Errorf("%w: invalid application id %q (expected application_<timestamp>_<sequence>)", ErrUnknownApplication, id)
	}
	return ts, n, nil
}

// containerID formats a container id the way YARN does:
// container_<clusterTimestamp>_<appSeq>_<attempt>_<containerSeq>.
func containerID(clusterTimestamp int64, appSeq, attempt, seq int) string {
	return fmt.Sprintf("container_%d_%04d_%02d_%06d", clusterTimestamp, appSeq, attempt, seq)
}
