// Package privatefile creates folders and files only their owner can read:
// folders 0700, files 0600, whatever the process's umask or an existing
// entry's mode; and removes folders whatever modes their owner's programs
// left inside them.
package privatefile
