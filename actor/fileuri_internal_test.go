package actor

import (
	"errors"
	"strings"
	"testing"
)

func TestBaseSegment(t *testing.T) {
	for _, c := range []struct {
		in, want string
		err      error
	}{
		{"/dir1", "dir1", nil},
		{"dir1", "dir1", nil},
		{"/dir1/", "dir1", nil},
		{"/dir1/././", "dir1", nil},
		{"/dir2/../dir1/", "dir1", nil},
		{"/../dir1", "dir1", nil},
		{"/a.b-c_d~e", "a.b-c_d~e", nil},
		{"/files", "", ErrReservedURI},
		{"/jars/", "", ErrReservedURI},
		{"/x/../files", "", ErrReservedURI},
		{"/", "", ErrInvalidFileURI},
		{"", "", ErrInvalidFileURI},
		{"/..", "", ErrInvalidFileURI},
		{"/a/b", "", ErrInvalidFileURI},
		{"/a b", "", ErrInvalidFileURI},
		{"/a%20b", "", ErrInvalidFileURI},
		{"/dir?x", "", ErrInvalidFileURI},
		{"/dir#x", "", ErrInvalidFileURI},
		{"spark://h:1/dir", "", ErrInvalidFileURI},
		{"//host/dir", "", ErrInvalidFileURI},
	} {
		got, err := baseSegment(c.in)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("baseSegment(%q) = %q, %v; want %q, %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestParseFileURI(t *testing.T) {
	for _, c := range []struct {
		in         string
		kind, rest string // "" kind: invalid
	}{
		{"spark://h:1/files/a%20b", "files", "a b"},
		{"spark://h:1/jars/x.jar", "jars", "x.jar"},
		{"spark://[::1]:7077/dir1/a/b.txt", "dir1", "a/b.txt"},
		{"spark://h:1/dir1/%2e%2e/x", "dir1", "../x"},
		{"spark://h:1/dir1/../x", "dir1", "../x"},
		{"spark://h:1/dir1//etc/passwd", "dir1", "/etc/passwd"},
		{"spark://h:1/files/a%2Fb", "files", "a/b"},
		{"spark://h:1/files/a%00b", "", ""},
		{"spark://h:1/files/", "", ""},
		{"spark://h:1/files", "", ""},
		{"spark://h:1//x", "", ""},
		{"spark://h:1", "", ""},
		{"spark://h/files/x", "", ""},
		{"spark://n@h:1/files/x", "", ""},
		{"spark://h:1/files/x?", "", ""},
		{"spark://h:1/files/x?a=b", "", ""},
		{"spark://h:1/files/x#f", "", ""},
		{"http://h:1/files/x", "", ""},
		{"spark:opaque", "", ""},
		{"%zz", "", ""},
	} {
		u, err := parseFileURI("open", c.in)
		if c.kind == "" {
			var fe *FileError
			if !errors.Is(err, ErrInvalidFileURI) || !errors.As(err, &fe) || fe.URI != c.in || fe.Op != "open" {
				t.Errorf("parseFileURI(%q) = %+v, %v; want a FileError matching ErrInvalidFileURI", c.in, u, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseFileURI(%q): %v", c.in, err)
			continue
		}
		kind, rest, err := splitFilePath(u.path)
		if kind != c.kind || rest != c.rest || err != nil {
			t.Errorf("parseFileURI(%q) splits into %q, %q, %v; want %q, %q", c.in, kind, rest, err, c.kind, c.rest)
		}
	}
}

// FuzzFileURI: parsing never panics; a URI that parses has a path the
// server splits; a base URI that is accepted serves URIs that parse back
// to it.
func FuzzFileURI(f *testing.F) {
	for _, s := range []string{"spark://h:1/files/a%20b", "spark://h:1/dir1/%2e%2e/x", "/dir1/././", "/dir2/../dir2/",
		"/files", "spark://[::1]:1/d/a/b", "spark://h:1/files/a%00", "//x", "%", "/a b"} {
		f.Add(s, "name")
	}
	addr := NewRpcAddress("127.0.0.1", 7077)
	f.Fuzz(func(t *testing.T, s, name string) {
		if u, err := parseFileURI("open", s); err == nil {
			if _, _, err := splitFilePath(u.path); err != nil {
				t.Fatalf("%q parses, but its path %q does not split: %v", s, u.path, err)
			}
		}
		seg, err := baseSegment(s)
		if err != nil {
			return
		}
		if seg == filesSegment || seg == jarsSegment || seg == "" || strings.ContainsAny(seg, "/%") {
			t.Fatalf("baseSegment(%q) = %q", s, seg)
		}
		if name == "" || strings.IndexByte(name, 0) >= 0 {
			return
		}
		uri := servedURI(addr, seg, name)
		u, err := parseFileURI("open", uri)
		if err != nil {
			t.Fatalf("served URI %q does not parse: %v", uri, err)
		}
		kind, rest, err := splitFilePath(u.path)
		if err != nil || kind != seg || rest != name {
			t.Fatalf("served URI %q splits into %q, %q, %v; want %q, %q", uri, kind, rest, err, seg, name)
		}
	})
}
