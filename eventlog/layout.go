// This file holds the names of a log's files, as Spark's: a single file
// "<app>[.zstd][.inprogress]", or a rolling folder "eventlog_v2_<app>"
// of "events_<n>_<app>[.zstd]" files beside an "appstatus_<app>[.inprogress]"
// marker, where <app> is the application's id and "_<attempt>" when it has
// an attempt id.

package eventlog

import (
	"strings"
)

const (
	// inProgressSuffix marks a log being written.
	inProgressSuffix = ".inprogress"
	// codecSuffix ends a compressed file's name.
	codecSuffix = "." + Codec
	// rollingDirPrefix starts a rolling log's folder.
	rollingDirPrefix = "eventlog_v2_"
	// eventsFilePrefix starts a rolling log's event files.
	eventsFilePrefix = "events_"
	// appStatusPrefix starts a rolling log's status marker.
	appStatusPrefix = "appstatus_"
)

// Permissions: a log may hold what an application printed in its errors,
// so only its user and group (a history server run in the group) read it,
// and only its user writes it. A rolling folder is group-writable as
// Spark's (0770) so that a history server's cleaner of the group can
// delete it; the umask may take more away.
const (
	filePerm = 0o640
	dirPerm  = 0o770
)

// logName returns the name of appID's (and attemptID's) log, as Spark's
// EventLogFileWriter.nameForAppAndAttempt: the id made safe for a file
// name, then "_" and the attempt when there is one.
func logName(appID, attemptID string) string {
	n := sanitize(appID)
	if attemptID != "" {
		n += "_" + sanitize(attemptID)
	}
	return n
}

// sanitize replaces what cannot be in a file name, as Spark's
// Utils.sanitizeDirName: ' ', ':' and '/' become '-', '.', '$', '{', '}',
// '\”, '"' and '\\' become '_', and it is lower-cased.
func sanitize(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		switch r {
		case ' ', ':', '/':
			return '-'
		case '.', '$', '{', '}', '\'', '"', '\\':
			return '_'
		}
		if r < ' ' {
			return '_'
		}
		return r
	}, s))
}

// eventsFileName is the n-th (from 1) events file of a rolling log.
func eventsFileName(n int, name string, compressed bool) string {
	f := eventsFilePrefix + itoa(n) + "_" + name
	if compressed {
		f += codecSuffix
	}
	return f
}

// eventsFileIndex returns the index of a rolling log's events file name,
// or false when it is not one.
func eventsFileIndex(f string) (int, bool) {
	rest, ok := strings.CutPrefix(f, eventsFilePrefix)
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "_")
	if !ok || num == "" {
		return 0, false
	}
	n := 0
	for _, c := range num {
		if c < '0' || c > '9' || n > 1e8 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func itoa(n int) string {
	var b [20]byte
	return string(appendInt(b[:0], int64(n)))
}
