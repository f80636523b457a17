package cluster

// This file holds the application and container ids, YARN's format.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
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
		return 0, 0, fmt.Errorf("%w: invalid application id %q (expected application_<timestamp>_<sequence>)", ErrUnknownAppID, id)
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	n, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || ts < 0 || n < 0 {
		return 0, 0, fmt.Errorf("%w: invalid application id %q (expected application_<timestamp>_<sequence>)", ErrUnknownAppID, id)
	}
	return ts, n, nil
}

// ContainerID formats a container id the way YARN does:
// container_<clusterTimestamp>_<appSeq>_<attempt>_<containerSeq>.
func ContainerID(clusterTimestamp int64, appSeq, attempt, seq int) string {
	return fmt.Sprintf("container_%d_%04d_%02d_%06d", clusterTimestamp, appSeq, attempt, seq)
}

// appIDPattern and containerIDPattern are the ids the resource manager
// mints (AppID, containerID); the node manager takes no other id as part of
// a path.
var (
	appIDPattern       = regexp.MustCompile(`^application_[0-9]{1,19}_[0-9]{1,10}$`)
	containerIDPattern = regexp.MustCompile(`^container_[0-9]{1,19}_[0-9]{1,10}_[0-9]{1,10}_[0-9]{1,10}$`)
)

// ValidateAppID returns nil for an application id of the resource
// manager's form, application_<digits>_<digits>, and an error matching
// ErrInvalidID otherwise.
func ValidateAppID(id string) error {
	if !appIDPattern.MatchString(id) {
		return &InvalidIDError{Kind: "application", ID: id, Want: "application_<timestamp>_<sequence>"}
	}
	return nil
}

// ValidateContainerID returns nil for a container id of the resource
// manager's form, container_<timestamp>_<app>_<attempt>_<sequence> (all
// digits), and an error matching ErrInvalidID otherwise.
func ValidateContainerID(id string) error {
	if !containerIDPattern.MatchString(id) {
		return &InvalidIDError{Kind: "container", ID: id, Want: "container_<timestamp>_<app>_<attempt>_<sequence>"}
	}
	return nil
}

// SplitList splits a comma-separated list (a configuration value such as
// spark.modify.acls), trimming spaces and dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// ParseNodeAddress parses a node manager's "host:port"; a malformed one
// gives an address that cannot be reached, so the ask to it fails.
func ParseNodeAddress(s string) actor.RpcAddress {
	a, err := actor.ParseHostPort(s)
	if err != nil {
		return actor.RpcAddress{Host: s}
	}
	return a
}
