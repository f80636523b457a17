// File URIs: spark://host:port/files/NAME, /jars/NAME and /DIR/PATH, their parsing and the base URIs of directories.

package actor

import (
	"net/url"
	"path"
	"strings"
)

// The first path segments of the URIs of AddFile and AddJar; AddDirectory
// refuses them as base URIs.
const (
	filesSegment = "files"
	jarsSegment  = "jars"
)

// fileURI is a parsed file URI: the env that serves it and the path it
// asks for.
type fileURI struct {
	addr RpcAddress
	// path is the URI's path as escaped in the URI ("/files/a%20b"); the
	// server unescapes its segments.
	path string
}

// parseFileURI parses uri, "spark://host:port/KIND/REST", with KIND and REST
// not empty. Anything else is a *FileError for op that matches
// ErrInvalidFileURI.
func parseFileURI(op, uri string) (fileURI, error) {
	bad := func(why string) (fileURI, error) {
		return fileURI{}, &FileError{Op: op, URI: uri, Err: ErrInvalidFileURI, Detail: why}
	}
	u, err := url.Parse(uri)
	if err != nil {
		return bad("not a URI")
	}
	if u.Scheme != "spark" || u.Opaque != "" {
		return bad("scheme must be spark")
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return bad("unexpected user, query or fragment")
	}
	addr, err := ParseHostPort(u.Host)
	if err != nil {
		return bad("expected spark://host:port/PATH")
	}
	p := u.EscapedPath()
	if _, _, err := splitFilePath(p); err != nil {
		return bad("expected a path /files/NAME, /jars/NAME or /DIR/PATH")
	}
	return fileURI{addr: addr, path: p}, nil
}

// splitFilePath splits an escaped file URI path "/KIND/REST" into its
// unescaped first segment and the unescaped rest.
func splitFilePath(p string) (kind, rest string, err error) {
	first, tail, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !strings.HasPrefix(p, "/") || !ok || first == "" || tail == "" {
		return "", "", ErrInvalidFileURI
	}
	if kind, err = url.PathUnescape(first); err != nil {
		return "", "", ErrInvalidFileURI
	}
	if rest, err = url.PathUnescape(tail); err != nil || strings.IndexByte(rest, 0) >= 0 {
		return "", "", ErrInvalidFileURI
	}
	return kind, rest, nil
}

// fileName returns the unescaped last segment of an escaped file URI path:
// the name FetchFile gives the file.
func fileName(p string) (string, error) {
	return url.PathUnescape(p[strings.LastIndexByte(p, '/')+1:])
}

// servedURI returns the URI of what is served under the first segment kind
// and, when name is not empty, the file name in it.
func servedURI(addr RpcAddress, kind, name string) string {
	uri := addr.SparkURL() + "/" + kind
	if name != "" {
		uri += "/" + url.PathEscape(name)
	}
	return uri
}

// baseSegment returns the segment that the base URI of AddDirectory names,
// normalised as Spark's validateDirectoryUri does: "/dir1", "dir1/",
// "/dir1/././" and "/dir2/../dir1/" all name "dir1". A base URI is one
// segment of letters, digits and ".-_~"; "/files" and "/jars" are
// ErrReservedURI.
func baseSegment(baseURI string) (string, error) {
	u, err := url.Parse(baseURI)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", &DirectoryURIError{URI: baseURI, Err: ErrInvalidFileURI, Why: "a directory's base URI is a path, as /dir1"}
	}
	seg := path.Clean("/" + strings.Trim(u.Path, "/"))[1:]
	if seg == filesSegment || seg == jarsSegment {
		return "", &DirectoryURIError{URI: baseURI, Err: ErrReservedURI}
	}
	if seg == "" || strings.ContainsFunc(seg, notSegmentRune) {
		return "", &DirectoryURIError{URI: baseURI, Err: ErrInvalidFileURI, Why: "a directory's base URI is one segment of letters, digits and .-_~, as /dir1"}
	}
	return seg, nil
}

// notSegmentRune reports whether r may not appear in a directory's base URI.
func notSegmentRune(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(".-_~", r))
}
