// Package managers holds the cluster managers sparkrpc ships, in the order
// cluster.Submit asks them whether they take a master: the one list a new
// cluster manager is added to.
package managers
