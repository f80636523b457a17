// Package resourcemanager is the resource manager daemon of sparkrpc's
// YARN-shaped cluster (YARN's ResourceManager), on an env of package actor.
//
// The resource manager (endpoint "ResourceManager") hands out application
// ids application_<clusterTimestamp>_<seq>, moves applications through
// NEW → SUBMITTED → ACCEPTED → RUNNING → FINISHED | FAILED | KILLED with a
// final status, places containers without ever oversubscribing a node's
// memory or cores, and fails the containers of nodes that miss heartbeats.
// Each application gets a staging folder (0700) holding its configuration
// without its secret, removed when it ends or its submission fails.
//
// Its work is split between a core without I/O (core.go, apps.go,
// nodes.go, scheduling.go: state in, actions out) and the endpoint that
// serialises every message and carries the core's actions out.
//
// # Security
//
// The resource manager takes an application master's messages only from a
// connection authenticated with that application's key, and client, admin
// and node-manager messages only with the cluster's key (Config.PeerKeyID).
// It hands each application's secret, in memory only, to the node managers
// in the launch context of the application's containers, and starts an
// executor for an application master only in a container it allocated to it
// (AmStartContainer).
//
// # Files
//
//	resourcemanager.go  Config, Start and the ResourceManager handle
//	endpoint.go         the endpoint: messages in, the core's actions carried out
//	core.go             the core's state: nodes, applications, containers
//	apps.go             the application lifecycle, AM registration, reports and listings
//	nodes.go            node registration, heartbeats, completed containers, lost nodes
//	scheduling.go       where AM and executor containers go
//	auth.go             who may ask what: by key and by ACL
//	metrics.go          the Prometheus collector of applications, containers and nodes
package resourcemanager
