// Conf, Spark's SparkConf: typed access to spark.* keys, and the parsing of times and sizes.

package actor

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Configuration keys read by the actor package.
const (
	KeyNetworkTimeout     = "spark.network.timeout"
	KeyAskTimeout         = "spark.rpc.askTimeout"
	KeyLookupTimeout      = "spark.rpc.lookupTimeout"
	KeyDispatcherThreads  = "spark.rpc.netty.dispatcher.numThreads"
	KeyMessageMaxSize     = "spark.rpc.message.maxSize"
	defaultNetworkTimeout = "120s"
)

// Conf is Spark's configuration: a string map of spark.* keys with typed
// getters that parse Spark's time ("120s", "10ms", "1m") and size ("128m",
// "1g") strings. It is safe for concurrent use.
type Conf struct {
	mu sync.RWMutex
	m  map[string]string
}

// NewConf returns an empty configuration.
func NewConf() *Conf { return &Conf{m: make(map[string]string)} }

// ConfError reports a configuration value that cannot be parsed, or a
// required key that is not set (Value is then empty and Err is ErrKeyNotSet).
type ConfError struct {
	Key   string
	Value string
	Err   error
}

func (e *ConfError) Error() string {
	if e.Err == ErrKeyNotSet {
		return "configuration key not set: " + e.Key
	}
	return fmt.Sprintf("invalid value %q for configuration key %s: %v", e.Value, e.Key, e.Err)
}

// Unwrap returns the reason.
func (e *ConfError) Unwrap() error { return e.Err }

// ErrKeyNotSet is the reason of a ConfError for a required key that is unset.
var ErrKeyNotSet = fmt.Errorf("key not set")

// Set sets key to value and returns c.
func (c *Conf) Set(key, value string) *Conf {
	c.mu.Lock()
	c.m[key] = value
	c.mu.Unlock()
	return c
}

// SetIfMissing sets key to value unless it is already set, and returns c.
func (c *Conf) SetIfMissing(key, value string) *Conf {
	c.mu.Lock()
	if _, ok := c.m[key]; !ok {
		c.m[key] = value
	}
	c.mu.Unlock()
	return c
}

// Remove deletes key.
func (c *Conf) Remove(key string) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// Lookup returns the value of key and whether it is set.
func (c *Conf) Lookup(key string) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	return v, ok
}

// Get returns the value of key, or def when it is unset.
func (c *Conf) Get(key, def string) string {
	if v, ok := c.Lookup(key); ok {
		return v
	}
	return def
}

// Contains reports whether key is set.
func (c *Conf) Contains(key string) bool {
	_, ok := c.Lookup(key)
	return ok
}

// All returns a copy of every key and value.
func (c *Conf) All() map[string]string {
	if c == nil {
		return map[string]string{}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.m)
}

// Keys returns the set keys in sorted order.
func (c *Conf) Keys() []string {
	return slices.Sorted(maps.Keys(c.All()))
}

// Clone returns an independent copy of c.
func (c *Conf) Clone() *Conf { return &Conf{m: c.All()} }

// GetInt returns key as an integer, or def when it is unset.
func (c *Conf) GetInt(key string, def int) (int, error) {
	v, ok := c.Lookup(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return def, &ConfError{Key: key, Value: v, Err: err}
	}
	return n, nil
}

// GetBool returns key as a boolean, or def when it is unset.
func (c *Conf) GetBool(key string, def bool) (bool, error) {
	v, ok := c.Lookup(key)
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return def, &ConfError{Key: key, Value: v, Err: err}
	}
	return b, nil
}

// GetDuration returns key as a duration parsed with ParseTime, where a bare
// number is in unit (Spark's timeConf unit for the key). def is a Spark time
// string used when the key is unset.
func (c *Conf) GetDuration(key, def string, unit time.Duration) (time.Duration, error) {
	v, ok := c.Lookup(key)
	if !ok {
		v = def
	}
	d, err := ParseTime(v, unit)
	if err != nil {
		return 0, &ConfError{Key: key, Value: v, Err: err}
	}
	return d, nil
}

// GetSizeAsBytes returns key as a number of bytes parsed with ParseSize,
// where a bare number is in unit bytes (Spark's bytesConf unit: 1 for bytes,
// 1<<20 for MiB). def is a size string used when the key is unset.
func (c *Conf) GetSizeAsBytes(key, def string, unit int64) (int64, error) {
	v, ok := c.Lookup(key)
	if !ok {
		v = def
	}
	n, err := ParseSize(v, unit)
	if err != nil {
		return 0, &ConfError{Key: key, Value: v, Err: err}
	}
	return n, nil
}

// MaxMessageSize returns spark.rpc.message.maxSize in bytes (the key is in
// MiB, default 128, at most 2047).
func (c *Conf) MaxMessageSize() (int, error) {
	n, err := c.GetSizeAsBytes(KeyMessageMaxSize, "128", 1<<20)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n > 2047<<20 {
		v, _ := c.Lookup(KeyMessageMaxSize)
		return 0, &ConfError{Key: KeyMessageMaxSize, Value: v, Err: fmt.Errorf("must be between 1 and 2047 MiB")}
	}
	return int(n), nil
}

// SetFromArg sets a "key=value" pair as given to --conf.
func (c *Conf) SetFromArg(arg string) error {
	k, v, ok := strings.Cut(arg, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("malformed --conf %q: expected key=value", arg)
	}
	c.Set(k, v)
	return nil
}

var timeUnits = map[string]time.Duration{
	"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
	"m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// ParseTime parses a Spark time string: a non-negative integer with an
// optional suffix us, ms, s, m or min, h, d. A bare number is in unit.
func ParseTime(s string, unit time.Duration) (time.Duration, error) {
	num, suffix := splitNumber(strings.ToLower(strings.TrimSpace(s)))
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("time must be specified as seconds (s), milliseconds (ms), microseconds (us), minutes (m or min), hour (h), or day (d), e.g. 50s, 100ms, or 250us: %q", s)
	}
	mult := unit
	if suffix != "" {
		u, ok := timeUnits[suffix]
		if !ok {
			return 0, fmt.Errorf("invalid suffix %q in time string %q", suffix, s)
		}
		mult = u
	}
	if n > 0 && mult > 0 && time.Duration(n) > time.Duration(1<<63-1)/mult {
		return 0, fmt.Errorf("time %q overflows", s)
	}
	return time.Duration(n) * mult, nil
}

var sizeUnits = map[string]int64{
	"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "p": 1 << 50, "pb": 1 << 50,
}

// ParseSize parses a Spark size string: a non-negative integer with an
// optional suffix b, k/kb, m/mb, g/gb, t/tb, p/pb (powers of 1024). A bare
// number is in unit bytes.
func ParseSize(s string, unit int64) (int64, error) {
	num, suffix := splitNumber(strings.ToLower(strings.TrimSpace(s)))
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size must be specified as bytes (b), kibibytes (k), mebibytes (m), gibibytes (g), tebibytes (t), or pebibytes (p), e.g. 50b, 100k, or 250m: %q", s)
	}
	mult := unit
	if suffix != "" {
		u, ok := sizeUnits[suffix]
		if !ok {
			return 0, fmt.Errorf("invalid suffix %q in size string %q", suffix, s)
		}
		mult = u
	}
	if n > 0 && mult > (1<<63-1)/n {
		return 0, fmt.Errorf("size %q overflows", s)
	}
	return n * mult, nil
}

func splitNumber(s string) (num, suffix string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || (i == 0 && s[i] == '-')) {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}
