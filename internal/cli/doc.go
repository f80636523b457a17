// Package cli holds what the commands of a sparkrpc program share: usage
// and exit errors, the log flags and loggers, the configuration a command
// reads (--properties-file, --conf, the environment) with its rules for
// secrets, and the daemons' listening and shutdown.
//
// # Files
//
//	daemon.go   listening on a port with spark.port.maxRetries, shutting an env down
//	errors.go   UsageError, ExitError and the messages a command prints
//	logging.go  --log-level and --log-format, and the loggers they make
//	secrets.go  a command's configuration and the secret rules it enforces
//	terminal.go whether a writer is a terminal
package cli
