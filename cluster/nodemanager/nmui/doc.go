// Package nmui serves a node manager's web UI: its running containers, each
// container's logs (the http URLs its containers get as SPARK_LOG_URL_STDOUT
// and SPARK_LOG_URL_STDERR, see nodemanager.Config.WebUI) and its metrics.
//
// The UI starts before the node manager, so that its first container already
// gets log URLs; it reads from the node manager that its Node holds once that
// runs, and answers 503 (metrics) or "not found" (logs) before.
package nmui
