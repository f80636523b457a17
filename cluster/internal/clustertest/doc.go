// Package clustertest holds what the cluster packages' tests share: a
// resource manager and node managers on an in-memory network, and the
// processes a test's containers started.
package clustertest
