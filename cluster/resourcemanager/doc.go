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
// # Staging
//
// Before its submission, the user and client that created an application
// stream its resources (the user's program and --files) into its staging
// folder (RmStageChunk, files 0600): in order, at most 1 MiB a chunk,
// hashed as they come, at most Config.MaxStagedBytes
// (spark.sparkrpc.yarn.staging.maxAppSize, 8g) in all; a commit
// (RmStageCommit) checks size and SHA-256. A submission may name only
// committed resources, which the resource manager then hands to every
// container of the application, its AM's and its executors' alike. Only a
// registered node manager on which the application has a container reads
// them back (RmFetchResource), in bounded chunks.
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
//	staging.go          applications' resources: staged in chunks, committed, read back
//	auth.go             who may ask what: by key, by ACL, by creator and by node
//	metrics.go          the Prometheus collector of applications, containers and nodes
package resourcemanager
