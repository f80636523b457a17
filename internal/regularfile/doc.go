// Package regularfile opens for reading files that someone less trusted
// may have put in place of the expected ones, as a container may in its log
// folder or any driver in the folder of event logs: it takes regular files
// only, and never waits in the open of a FIFO, which would block until a
// writer came.
package regularfile
