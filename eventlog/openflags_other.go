//go:build !unix

package eventlog

// openFlags adds nothing where opening a FIFO does not wait for a writer.
const openFlags = 0
