// This file holds the spark.eventLog.* keys and Config, what they say.

package eventlog

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

// The keys of the event log, as Spark's.
const (
	// KeyEnabled turns the event log on (default false).
	KeyEnabled = "spark.eventLog.enabled"
	// KeyDir is the folder the logs are written in: a plain path or a
	// file: URI (default file:/tmp/spark-events, which must exist).
	KeyDir = "spark.eventLog.dir"
	// KeyCompress compresses the log (default true, Spark 4's default).
	KeyCompress = "spark.eventLog.compress"
	// KeyCompressionCodec is the codec of a compressed log: only zstd
	// (Spark 4's default) is supported.
	KeyCompressionCodec = "spark.eventLog.compression.codec"
	// KeyRollingEnabled writes the log as a folder of files of at most
	// KeyRollingMaxFileSize each (default false).
	KeyRollingEnabled = "spark.eventLog.rolling.enabled"
	// KeyRollingMaxFileSize is the size a rolling log's file grows to
	// before the next one starts (default 128m, at least 10m).
	KeyRollingMaxFileSize = "spark.eventLog.rolling.maxFileSize"
	// KeyOverwrite replaces a log of the same application (default false:
	// such a log fails the application as it starts).
	KeyOverwrite = "spark.eventLog.overwrite"
	// KeyBufferKB is the size of the buffer between the writer and the
	// file (default 100k).
	KeyBufferKB = "spark.eventLog.buffer.kb"
)

// DefaultDir is KeyDir's default, Spark's.
const DefaultDir = "file:/tmp/spark-events"

// minRollingFileSize is Spark's lower bound of KeyRollingMaxFileSize.
const minRollingFileSize = 10 << 20

// Codec is the compression codec (KeyCompressionCodec) sparkrpc writes
// and reads, and the suffix of a compressed log's files.
const Codec = "zstd"

// Config is how a Writer writes a log: what the spark.eventLog.* keys say
// (ConfigFrom), or set directly.
type Config struct {
	// Dir is the local folder the logs are written in; it must exist.
	Dir string
	// Compress writes zstd-compressed files (suffix ".zstd").
	Compress bool
	// Rolling writes a folder of files of at most MaxFileSize bytes
	// (uncompressed) each; a MaxFileSize <= 0 is 128 MiB.
	Rolling     bool
	MaxFileSize int64
	// Overwrite replaces a log of the same application.
	Overwrite bool
	// BufferSize is the size of the buffer in front of the file in bytes;
	// <= 0 is 100 KiB.
	BufferSize int
	// QueueBytes bounds the encoded events held for the file while it
	// falls behind, beyond which events are dropped (see Writer); <= 0
	// is 16 MiB.
	QueueBytes int
}

// ConfigFrom reads the spark.eventLog.* keys of conf: whether the log is
// enabled, and how it is written. A value that does not parse, a KeyDir
// of a scheme other than file, or a codec other than zstd is an error
// naming the key.
func ConfigFrom(conf *actor.Conf) (enabled bool, cfg Config, err error) {
	if enabled, err = conf.GetBool(KeyEnabled, false); err != nil || !enabled {
		return false, Config{}, err
	}
	if cfg.Dir, err = ParseDir(conf.Get(KeyDir, DefaultDir)); err != nil {
		return false, Config{}, err
	}
	if cfg.Compress, err = conf.GetBool(KeyCompress, true); err != nil {
		return false, Config{}, err
	}
	if c := strings.ToLower(strings.TrimSpace(conf.Get(KeyCompressionCodec, Codec))); cfg.Compress && c != Codec {
		return false, Config{}, fmt.Errorf("%s: codec %q is not supported (only %s)", KeyCompressionCodec, c, Codec)
	}
	if cfg.Rolling, err = conf.GetBool(KeyRollingEnabled, false); err != nil {
		return false, Config{}, err
	}
	if cfg.MaxFileSize, err = conf.GetSizeAsBytes(KeyRollingMaxFileSize, "128m", 1); err != nil {
		return false, Config{}, err
	}
	if cfg.Rolling && cfg.MaxFileSize < minRollingFileSize {
		return false, Config{}, fmt.Errorf("%s: %d bytes; it must be at least 10m", KeyRollingMaxFileSize, cfg.MaxFileSize)
	}
	if cfg.Overwrite, err = conf.GetBool(KeyOverwrite, false); err != nil {
		return false, Config{}, err
	}
	kb, err := conf.GetSizeAsBytes(KeyBufferKB, "100k", 1<<10)
	if err != nil {
		return false, Config{}, err
	}
	cfg.BufferSize = int(kb)
	return true, cfg, nil
}

// ParseDir returns the local folder a KeyDir value names: a plain path or a
// file: URI ("file:/tmp/spark-events", "file:///tmp/spark-events"). Any
// other scheme (hdfs:, s3a:) is an error naming KeyDir. A relative path is
// returned as it is (see AbsDir).
func ParseDir(v string) (string, error) { return ParseFolder(KeyDir, v) }

// ParseFolder is ParseDir for the value v of another key (a history
// server's folder of logs), which its errors name.
func ParseFolder(key, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", fmt.Errorf("%s is empty", key)
	}
	scheme, _, ok := strings.Cut(v, ":")
	if !ok || len(scheme) < 2 || strings.ContainsAny(scheme, `/\`) {
		return v, nil // a path (C: is a drive, not a scheme)
	}
	if !strings.EqualFold(scheme, "file") {
		return "", fmt.Errorf("%s: %q: scheme %q is not supported; give a local folder (a path or a file: URI)",
			key, v, scheme)
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%s: %q: a file: URI names a host (%s); give a local folder", key, v, u.Host)
	}
	p := u.Path
	if p == "" {
		p = u.Opaque // file:relative/dir
	}
	if p == "" {
		return "", fmt.Errorf("%s: %q names no folder", key, v)
	}
	return filepath.FromSlash(p), nil
}

// AbsDir sets conf's KeyDir to an absolute path, relative to the working
// directory, when it is set and relative: what a submitter does
// before it ships the conf to a driver that runs elsewhere. A value that
// does not parse is left for the driver to report.
func AbsDir(conf *actor.Conf) {
	v, ok := conf.Lookup(KeyDir)
	if !ok {
		return
	}
	dir, err := ParseDir(v)
	if err != nil || filepath.IsAbs(dir) {
		return
	}
	if abs, err := filepath.Abs(dir); err == nil {
		conf.Set(KeyDir, abs)
	}
}

// bufferSize returns c.BufferSize or its default.
func (c Config) bufferSize() int {
	if c.BufferSize <= 0 {
		return 100 << 10
	}
	return c.BufferSize
}

// maxFileSize returns c.MaxFileSize or its default.
func (c Config) maxFileSize() int64 {
	if c.MaxFileSize <= 0 {
		return 128 << 20
	}
	return c.MaxFileSize
}
