//go:build !linux

package bench

// schedulingClass reports no scheduling policy where it is not read.
func schedulingClass() string { return "" }
