// The date filters of Spark's /api/v1/applications.

package webui

import (
	"strconv"
	"strings"
	"time"
)

// inDateRange reports whether a is within bounds (minDate, maxDate,
// minEndDate, maxEndDate; zero for none) as Spark's
// ApplicationListResource has it: its start within the first two, and its
// end within the last two, or, while it runs, maxEndDate after now.
func inDateRange(a HistoryApp, bounds [4]time.Time, now time.Time) bool {
	minStart, maxStart, minEnd, maxEnd := bounds[0], bounds[1], bounds[2], bounds[3]
	if !minStart.IsZero() && a.Start.Before(minStart) || !maxStart.IsZero() && a.Start.After(maxStart) {
		return false
	}
	if !a.Completed {
		return maxEnd.IsZero() || maxEnd.After(now)
	}
	return !(!minEnd.IsZero() && a.End.Before(minEnd) || !maxEnd.IsZero() && a.End.After(maxEnd))
}

// parseSparkDate parses a date of Spark's REST API (SimpleDateParam): its
// own text, "2015-02-03T16:42:40.000GMT" (a zone name or offset after the
// milliseconds), a day "2015-02-03" (GMT), or epoch milliseconds.
func parseSparkDate(s string) (time.Time, bool) {
	if len(s) > len("2006-01-02T15:04:05.000") && s[10] == 'T' {
		zone := s[len("2006-01-02T15:04:05.000"):]
		base, err := time.Parse("2006-01-02T15:04:05.000", s[:len(s)-len(zone)])
		if err != nil {
			return time.Time{}, false
		}
		off, ok := zoneOffset(zone)
		if !ok {
			return time.Time{}, false
		}
		return base.Add(-off), true
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, true
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 {
		return time.UnixMilli(ms), true
	}
	return time.Time{}, false
}

// zoneOffset returns the offset from UTC of a zone as Java's 'z' parses
// it: GMT, UTC or Z, each optionally followed by +hh:mm or -hh:mm, or a
// bare +hhmm / -hh:mm.
func zoneOffset(z string) (time.Duration, bool) {
	for _, name := range []string{"GMT", "UTC", "Z"} {
		if rest, ok := strings.CutPrefix(z, name); ok {
			z = rest
			break
		}
	}
	if z == "" {
		return 0, true
	}
	sign := time.Duration(1)
	switch z[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	if len(digits) != 2 && len(digits) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	h, m := n, 0
	if len(digits) == 4 {
		h, m = n/100, n%100
	}
	if h > 23 || m > 59 {
		return 0, false
	}
	return sign * (time.Duration(h)*time.Hour + time.Duration(m)*time.Minute), true
}
