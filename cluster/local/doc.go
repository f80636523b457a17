// Package local is the cluster manager of local[N]: the driver and one
// executor with N cores in the submitting process, client deploy mode
// only.
package local
