// Reading and writing Spark configuration files in the java.util.Properties format.

package actor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// LoadProperties reads a properties file into c the way Spark reads
// spark-defaults.conf and --properties-file: as java.util.Properties.load
// over UTF-8 text, then each value trimmed of leading and trailing spaces
// and control characters other than escaped \r and \n (Spark's
// Utils.getPropertiesFromFile). That is:
//
//   - a key is separated from its value by the first unescaped '=', ':' or
//     whitespace (space, tab, form feed); whitespace around the separator is
//     skipped, and a key alone on a line has the empty value;
//   - a line whose first non-blank character is '#' or '!' is a comment;
//     blank lines are skipped;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading whitespace is dropped (CRLF, LF and CR line ends);
//   - in keys and values \t, \n, \r and \f are control characters,
//     \uXXXX is a UTF-16 code unit (a surrogate pair makes one character),
//     and a backslash before any other character stands for that character
//     (so "a\=b=c" sets "a=b" to "c");
//   - no ${...} is expanded; a later duplicate key wins.
//
// Unlike java.util.Properties, a leading UTF-8 byte order mark is skipped,
// and an empty key, a malformed \uXXXX escape or text that is not valid
// UTF-8 is an error. Errors are *PropertiesError; on error c is unchanged.
func (c *Conf) LoadProperties(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	props, err := parseProperties(data)
	if err != nil {
		return err
	}
	c.mu.Lock()
	for _, kv := range props {
		c.m[kv[0]] = trimExceptCRLF(kv[1])
	}
	c.mu.Unlock()
	return nil
}

// StoreProperties writes pairs to w as a properties file that
// LoadProperties (and java.util.Properties.load) reads back to the same
// keys and values, keys sorted: java.util.Properties.store's escaping, with
// a backslash before '\\', '=', ':', '#', '!' and, in keys and at the start
// of a value, a space; \t, \n, \r and \f as escapes, and other control
// characters as \uXXXX. Text is written as UTF-8. Leading and trailing
// control characters of a value other than \r and \n do not survive the
// trip, because LoadProperties trims them as Spark does.
func StoreProperties(w io.Writer, pairs map[string]string) error {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(pairs)) {
		writePropertiesText(&b, k, true)
		b.WriteByte('=')
		writePropertiesText(&b, pairs[k], false)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePropertiesText escapes s as java.util.Properties.saveConvert does
// for a key (every space escaped) or a value (a leading space escaped).
func writePropertiesText(b *strings.Builder, s string, key bool) {
	for i, r := range s {
		switch r {
		case ' ':
			if key || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(' ')
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '\\', '=', ':', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
}

// Reasons of a PropertiesError.
var (
	// ErrMalformedEscape: a \u not followed by four hexadecimal digits.
	ErrMalformedEscape = errors.New("malformed \\uxxxx encoding")
	// ErrEmptyKey: a line with a value but no key ("=value").
	ErrEmptyKey = errors.New("empty key")
	// ErrInvalidUTF8: the file is not UTF-8 text.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
)

// PropertiesError reports a properties file that cannot be read: Line is
// the line (from 1) where the offending entry starts, Err the reason
// (ErrMalformedEscape, ErrEmptyKey or ErrInvalidUTF8).
type PropertiesError struct {
	Line int
	Err  error
}

func (e *PropertiesError) Error() string {
	return fmt.Sprintf("properties line %d: %v", e.Line, e.Err)
}

// Unwrap returns the reason.
func (e *PropertiesError) Unwrap() error { return e.Err }

// parseProperties returns the key/value pairs of a properties file in file
// order, values untrimmed: java.util.Properties.load's LineReader (as of
// JDK 9) and loadConvert.
func parseProperties(data []byte) ([][2]string, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if !utf8.Valid(data) {
		return nil, &PropertiesError{Line: lineAt(data, firstInvalidRune(data)), Err: ErrInvalidUTF8}
	}
	r := propertiesReader{data: data, skipSpace: true}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if r.skipSpace {
			if isPropSpace(c) || !r.continued && (c == '\n' || c == '\r') {
				continue
			}
			r.skipSpace, r.continued = false, false
		}
		switch {
		case len(r.line) == 0 && (c == '#' || c == '!'):
			i = r.skipComment(i)
		case c != '\n' && c != '\r':
			r.add(i, c)
		default:
			var err error
			if i, err = r.lineEnd(i, c); err != nil {
				return nil, err
			}
		}
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return r.props, nil
}

// firstInvalidRune returns the offset of the first byte of data that does
// not start a valid UTF-8 sequence (len(data) if there is none).
func firstInvalidRune(data []byte) int {
	i := 0
	for {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
}

// propertiesReader is the state of parseProperties: the logical line being
// gathered and the pairs read so far.
type propertiesReader struct {
	data  []byte
	props [][2]string
	line  []byte // the logical line being read, escapes intact
	start int    // where line starts in data
	// The LineReader's state: skipping leading whitespace (and, unless
	// a continuation just ended a line, line ends); the last character
	// was an unescaped backslash.
	skipSpace, continued, backslash bool
}

// add appends data[i], which is c and not a line end, to the logical line.
func (r *propertiesReader) add(i int, c byte) {
	if len(r.line) == 0 {
		r.start = i
	}
	r.line = append(r.line, c)
	r.backslash = c == '\\' && !r.backslash
}

// skipComment skips the comment that starts at data[i] and returns the
// offset of its line end (or of the last byte of data).
func (r *propertiesReader) skipComment(i int) int {
	// A comment runs to its line end, whatever it ends with.
	for i+1 < len(r.data) && r.data[i+1] != '\n' && r.data[i+1] != '\r' {
		i++
	}
	r.skipSpace = true
	return i + 1
}

// lineEnd handles the line end c at data[i]: it ends the logical line, or
// continues it on the next line. It returns the offset of the line end's
// last byte.
func (r *propertiesReader) lineEnd(i int, c byte) (int, error) {
	switch {
	case len(r.line) == 0:
		// A blank line, or a continuation onto one.
		r.skipSpace = true
	case r.backslash:
		// An odd backslash at the line end continues the logical line
		// on the next one, without its leading whitespace.
		r.line = r.line[:len(r.line)-1]
		r.skipSpace, r.continued, r.backslash = true, true, false
		if c == '\r' && i+1 < len(r.data) && r.data[i+1] == '\n' {
			i++
		}
	default:
		if err := r.emit(); err != nil {
			return i, err
		}
		r.skipSpace = true
	}
	return i, nil
}

// end emits the logical line that the end of data cuts, if any; a
// backslash at the very end is dropped.
func (r *propertiesReader) end() error {
	if len(r.line) == 0 {
		return nil
	}
	if r.backslash {
		r.line = r.line[:len(r.line)-1]
	}
	return r.emit()
}

// emit splits the logical line into its pair and starts a new line.
func (r *propertiesReader) emit() error {
	k, v, err := splitProperty(r.line)
	if err == nil && k == "" {
		err = ErrEmptyKey
	}
	if err != nil {
		return &PropertiesError{Line: lineAt(r.data, r.start), Err: err}
	}
	r.props = append(r.props, [2]string{k, v})
	r.line, r.backslash = r.line[:0], false
	return nil
}

// isPropSpace reports whether c is whitespace in a properties file.
func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// lineAt returns the line (from 1) of data[i]; LF, CR and CRLF end lines.
func lineAt(data []byte, i int) int {
	n := 1
	for k, c := range data[:i] {
		if c == '\n' || c == '\r' && (k+1 == len(data) || data[k+1] != '\n') {
			n++
		}
	}
	return n
}

// splitProperty splits a logical line into its key and value, unescaped.
func splitProperty(line []byte) (key, value string, err error) {
	keyLen, valueStart := 0, len(line)
	hasSep, escaped := false, false
	for ; keyLen < len(line); keyLen++ {
		c := line[keyLen]
		if !escaped && (c == '=' || c == ':') {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if !escaped && isPropSpace(c) {
			valueStart = keyLen + 1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(line); valueStart++ {
		c := line[valueStart]
		if isPropSpace(c) {
			continue
		}
		if !hasSep && (c == '=' || c == ':') {
			hasSep = true
			continue
		}
		break
	}
	if key, err = unescapeProperty(line[:keyLen]); err != nil {
		return "", "", err
	}
	value, err = unescapeProperty(line[valueStart:])
	return key, value, err
}

// unescapeProperty decodes the escapes of a key or value. The text is
// decoded as UTF-16 code units, as Java does, so that a surrogate pair
// written as two \uXXXX escapes makes one character.
func unescapeProperty(s []byte) (string, error) {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s), nil
	}
	units := make([]uint16, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		i += size
		if r != '\\' || i == len(s) {
			units = utf16.AppendRune(units, r)
			continue
		}
		c := s[i]
		i++
		switch c {
		case 't':
			units = append(units, '\t')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 'f':
			units = append(units, '\f')
		case 'u':
			if i+4 > len(s) {
				return "", ErrMalformedEscape
			}
			u, err := strconv.ParseUint(string(s[i:i+4]), 16, 16)
			if err != nil {
				return "", ErrMalformedEscape
			}
			units = append(units, uint16(u))
			i += 4
		default:
			r, size := utf8.DecodeRune(s[i-1:])
			units = utf16.AppendRune(units, r)
			i += size - 1
		}
	}
	return string(utf16.Decode(units)), nil
}

// trimExceptCRLF trims leading and trailing characters up to U+0020 other
// than '\r' and '\n' (which can only come from escapes): Spark's
// Utils.trimExceptCRLF, applied to every value it loads from a file.
func trimExceptCRLF(s string) string {
	keep := func(r rune) bool { return r > ' ' || r == '\r' || r == '\n' }
	return strings.TrimRightFunc(strings.TrimLeftFunc(s, func(r rune) bool { return !keep(r) }),
		func(r rune) bool { return !keep(r) })
}
