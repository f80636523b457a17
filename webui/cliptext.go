// Long texts of events (task errors, job names), cut to what a page shows.

package webui

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// The most a store keeps of an event's text: a line of an event log may
// hold 16 MiB, and a store keeps a task's error for each of up to
// spark.ui.retainedTasks attempts, so a small compressed log could
// otherwise fill the history server's memory with a few repeated lines.
const (
	// MaxErrorText bounds a task's, a job's or the application's error.
	MaxErrorText = 16 << 10
	// MaxNameText bounds a job's or the application's name.
	MaxNameText = 4 << 10
)

// ClipText returns s when it has at most n bytes, else its first n bytes
// or fewer (whole UTF-8 sequences), copied so that the rest of s is not
// kept, followed by a note of its length.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// maxMapEntries bounds the entries a store keeps of an event's map (an
// executor's log URLs and attributes, the driver's log URLs).
const maxMapEntries = 64

// clipMap returns a copy of m with at most maxMapEntries entries (the
// first by key), each key and value clipped to n bytes; nil for nil.
func clipMap(m map[string]string, n int) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, min(len(m), maxMapEntries))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if len(out) == maxMapEntries {
			break
		}
		out[ClipText(k, n)] = ClipText(m[k], n)
	}
	return out
}
