// Package endpointtest holds what the cluster daemons' endpoint tests
// share, for tests inside those packages: an env on an in-memory network,
// and the check that an endpoint refuses an ask it does not handle.
package endpointtest
