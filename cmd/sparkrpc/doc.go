// Command sparkrpc is the one binary of sparkrpc: submit applications, run
// the resource manager and node managers, run an executor, and benchmark the
// RPC layer. Run `sparkrpc --help` for the subcommands.
//
// It is built on package launcher, as a user's own program is: the
// commands every sparkrpc program has (submit and the roles a cluster
// starts it in), with the example applications compiled in (the primary
// resource spark-internal), plus the daemons, the client commands and bench.
package main
