package actor_test

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		in      string
		unit    time.Duration
		want    time.Duration
		wantErr bool
	}{
		{in: "120s", unit: time.Second, want: 120 * time.Second},
		{in: "10ms", unit: time.Second, want: 10 * time.Millisecond},
		{in: "250us", unit: time.Second, want: 250 * time.Microsecond},
		{in: "1m", unit: time.Second, want: time.Minute},
		{in: "3min", unit: time.Second, want: 3 * time.Minute},
		{in: "2h", unit: time.Second, want: 2 * time.Hour},
		{in: "1d", unit: time.Second, want: 24 * time.Hour},
		{in: "120", unit: time.Second, want: 120 * time.Second},
		{in: "120", unit: time.Millisecond, want: 120 * time.Millisecond},
		{in: " 5S ", unit: time.Second, want: 5 * time.Second},
		{in: "0", unit: time.Second, want: 0},
		{in: "", wantErr: true},
		{in: "s", wantErr: true},
		{in: "-1s", wantErr: true},
		{in: "1.5s", wantErr: true},
		{in: "10 parsecs", wantErr: true},
		{in: "10w", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "99999999999999999999s", wantErr: true},
		{in: "9999999999999d", wantErr: true}, // overflows time.Duration
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := actor.ParseTime(tt.in, tt.unit)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseTime(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		unit    int64
		want    int64
		wantErr bool
	}{
		{in: "128m", unit: 1, want: 128 << 20},
		{in: "128", unit: 1 << 20, want: 128 << 20},
		{in: "128", unit: 1, want: 128},
		{in: "50b", unit: 1 << 20, want: 50},
		{in: "100k", unit: 1, want: 100 << 10},
		{in: "100kb", unit: 1, want: 100 << 10},
		{in: "2mb", unit: 1, want: 2 << 20},
		{in: "1g", unit: 1, want: 1 << 30},
		{in: "1GB", unit: 1, want: 1 << 30},
		{in: "3t", unit: 1, want: 3 << 40},
		{in: "1p", unit: 1, want: 1 << 50},
		{in: "0", unit: 1, want: 0},
		{in: "", wantErr: true},
		{in: "-1m", wantErr: true},
		{in: "1.5g", wantErr: true},
		{in: "12 parsecs", wantErr: true},
		{in: "1x", wantErr: true},
		{in: "9999999p", wantErr: true}, // overflows int64
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := actor.ParseSize(tt.in, tt.unit)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseSize(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSize(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestConfGetters(t *testing.T) {
	c := actor.NewConf().
		Set("spark.int", " 42 ").
		Set("spark.bool", "true").
		Set("spark.time", "5s").
		Set("spark.time.bare", "300").
		Set("spark.size", "64k").
		Set("spark.bad", "12 parsecs")
	if n, err := c.GetInt("spark.int", 0); err != nil || n != 42 {
		t.Errorf("GetInt = %d, %v", n, err)
	}
	if n, err := c.GetInt("spark.unset", 7); err != nil || n != 7 {
		t.Errorf("GetInt of an unset key = %d, %v; want the default", n, err)
	}
	if b, err := c.GetBool("spark.bool", false); err != nil || !b {
		t.Errorf("GetBool = %v, %v", b, err)
	}
	if d, err := c.GetDuration("spark.time", "1s", time.Second); err != nil || d != 5*time.Second {
		t.Errorf("GetDuration = %v, %v", d, err)
	}
	if d, err := c.GetDuration("spark.time.bare", "1s", time.Millisecond); err != nil || d != 300*time.Millisecond {
		t.Errorf("GetDuration of a bare number = %v, %v; want 300ms", d, err)
	}
	if d, err := c.GetDuration("spark.unset", "2m", time.Second); err != nil || d != 2*time.Minute {
		t.Errorf("GetDuration of an unset key = %v, %v; want the default", d, err)
	}
	if n, err := c.GetSizeAsBytes("spark.size", "1m", 1); err != nil || n != 64<<10 {
		t.Errorf("GetSizeAsBytes = %d, %v", n, err)
	}
	if n, err := c.GetSizeAsBytes("spark.unset", "3", 1<<20); err != nil || n != 3<<20 {
		t.Errorf("GetSizeAsBytes of an unset key = %d, %v; want the default", n, err)
	}
	if n, err := c.MaxMessageSize(); err != nil || n != 128<<20 {
		t.Errorf("MaxMessageSize default = %d, %v; want 128 MiB", n, err)
	}
	malformed := map[string]func() error{
		"GetInt":         func() error { _, err := c.GetInt("spark.bad", 0); return err },
		"GetBool":        func() error { _, err := c.GetBool("spark.bad", false); return err },
		"GetDuration":    func() error { _, err := c.GetDuration("spark.bad", "1s", time.Second); return err },
		"GetSizeAsBytes": func() error { _, err := c.GetSizeAsBytes("spark.bad", "1m", 1); return err },
	}
	for name, get := range malformed {
		err := get()
		var ce *actor.ConfError
		if !errors.As(err, &ce) || ce.Key != "spark.bad" || ce.Value != "12 parsecs" {
			t.Errorf("%s of a malformed value = %v (%T), want a *ConfError naming key and value", name, err, err)
			continue
		}
		if !strings.Contains(err.Error(), "spark.bad") || !strings.Contains(err.Error(), "12 parsecs") {
			t.Errorf("%s: error %q names neither key nor value", name, err)
		}
		if ce.Unwrap() == nil {
			t.Errorf("%s: ConfError has no reason", name)
		}
	}
	for _, v := range []string{"0", "2048", "big"} {
		if _, err := actor.NewConf().Set(actor.KeyMessageMaxSize, v).MaxMessageSize(); err == nil {
			t.Errorf("MaxMessageSize(%q) has no error", v)
		}
	}
}

func TestConfMap(t *testing.T) {
	c := actor.NewConf().Set("b", "2").Set("a", "1")
	c.SetIfMissing("a", "changed").SetIfMissing("c", "3")
	if got := c.Get("a", ""); got != "1" {
		t.Errorf("SetIfMissing overwrote a: %q", got)
	}
	if got := c.Get("missing", "def"); got != "def" {
		t.Errorf("Get of a missing key = %q", got)
	}
	if got, want := c.Keys(), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Keys() = %q, want %q", got, want)
	}
	clone := c.Clone()
	c.Remove("b")
	if c.Contains("b") || !clone.Contains("b") {
		t.Errorf("Remove/Clone: conf has b %v, clone has b %v", c.Contains("b"), clone.Contains("b"))
	}
	all := c.All()
	all["a"] = "mutated"
	if c.Get("a", "") != "1" {
		t.Errorf("All() is not a copy")
	}
	var nilConf *actor.Conf
	if _, ok := nilConf.Lookup("a"); ok || len(nilConf.All()) != 0 {
		t.Errorf("a nil *Conf is not empty")
	}
	// Safe for concurrent use.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				c.Set("k", strings.Repeat("x", i))
				_ = c.Get("k", "")
				_ = c.Keys()
			}
		})
	}
	wg.Wait()
}

func TestSetFromArg(t *testing.T) {
	tests := []struct {
		arg, key, value string
		wantErr         bool
	}{
		{arg: "spark.a=1", key: "spark.a", value: "1"},
		{arg: "spark.b=x=y", key: "spark.b", value: "x=y"},
		{arg: " spark.c =v", key: "spark.c", value: "v"},
		{arg: "spark.d=", key: "spark.d", value: ""},
		{arg: "spark.e", wantErr: true},
		{arg: "=v", wantErr: true},
		{arg: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			c := actor.NewConf()
			err := c.SetFromArg(tt.arg)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("SetFromArg(%q) has no error; conf %v", tt.arg, c.All())
				}
				if len(c.All()) != 0 {
					t.Errorf("a rejected argument changed the conf: %v", c.All())
				}
				return
			}
			if err != nil {
				t.Fatalf("SetFromArg(%q): %v", tt.arg, err)
			}
			if v, ok := c.Lookup(tt.key); !ok || v != tt.value {
				t.Fatalf("after SetFromArg(%q): %s = %q (set %v), want %q", tt.arg, tt.key, v, ok, tt.value)
			}
		})
	}
}

func TestLoadProperties(t *testing.T) {
	const props = `# a comment
! another comment

spark.master=local[2]
spark.app.name = My App
spark.executor.memory 2g
spark.driver.cores: 4
   spark.indented=yes
spark.empty=
spark.url=spark://host:7077
`
	c := actor.NewConf().Set("spark.app.name", "overwritten")
	if err := c.LoadProperties(strings.NewReader(props)); err != nil {
		t.Fatalf("LoadProperties: %v", err)
	}
	want := map[string]string{
		"spark.master":          "local[2]",
		"spark.app.name":        "My App",
		"spark.executor.memory": "2g",
		"spark.driver.cores":    "4",
		"spark.indented":        "yes",
		"spark.empty":           "",
		"spark.url":             "spark://host:7077",
	}
	got := c.All()
	if len(got) != len(want) {
		t.Errorf("loaded %d keys (%v), want %d", len(got), got, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if err := actor.NewConf().LoadProperties(strings.NewReader("=value\n")); err == nil {
		t.Errorf("a line without a key loaded without error")
	}
}

// LoadProperties reads spark-defaults.conf as Spark does: java.util.Properties
// syntax, then values trimmed (Spark's trimExceptCRLF). The expectations were
// checked against java.util.Properties.load.
func TestLoadPropertiesJavaSyntax(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a:b", map[string]string{"a": "b"}},
		{"space", "a b", map[string]string{"a": "b"}},
		{"tab and form feed", "a\tb\nc\fd", map[string]string{"a": "b", "c": "d"}},
		{"blanks around the separator", "a  =  b\nc \t: d", map[string]string{"a": "b", "c": "d"}},
		{"one separator only", "a==b\nc = : d", map[string]string{"a": "=b", "c": ": d"}},
		{"escaped separators in the key", `a\=b=c` + "\n" + `d\:e\ f:g`, map[string]string{"a=b": "c", "d:e f": "g"}},
		{"continuation drops the next line's leading blanks", "k=one \\\n     two\\\n\t three", map[string]string{"k": "one twothree"}},
		{"continuation over CRLF", "k=a\\\r\n   b\r\nj=c\r\n", map[string]string{"k": "ab", "j": "c"}},
		{"continuation over CR", "k=a\\\r   b\rj=c", map[string]string{"k": "ab", "j": "c"}},
		{"continuation in the key", "spark.\\\n  app.name=x", map[string]string{"spark.app.name": "x"}},
		{"a continued line is no comment", "k=a\\\n#b", map[string]string{"k": "a#b"}},
		{"an even number of backslashes does not continue", "k=a\\\\\nj=b", map[string]string{"k": `a\`, "j": "b"}},
		{"a backslash at the end of the file is dropped", "k=v\\", map[string]string{"k": "v"}},
		{"a continuation onto a blank line ends the entry", "k=a\\\n\nj=b", map[string]string{"k": "a", "j": "b"}},
		{"a continuation onto a comment skips it", "\\\n  # c\nk=v", map[string]string{"k": "v"}},
		{"control escapes", `k=a\tb\nc\rd\fe`, map[string]string{"k": "a\tb\nc\rd\fe"}},
		{"unicode escapes", `k=\u00e9\u4E2D`, map[string]string{"k": "é中"}},
		{"unicode escape in the key", `\u0073park.x=1`, map[string]string{"spark.x": "1"}},
		{"surrogate pair", `k=\uD83D\uDE00`, map[string]string{"k": "😀"}},
		{"UTF-8 text", "k=héllo 中", map[string]string{"k": "héllo 中"}},
		{"other escapes stand for the character", `k=\q\#\!\\\"`, map[string]string{"k": `q#!\"`}},
		{"empty value", "k=\nj:\nl =   ", map[string]string{"k": "", "j": "", "l": ""}},
		{"key alone on a line", "lonely\n   indented   \n", map[string]string{"lonely": "", "indented": ""}},
		{"comments", "# c\n! c\n   # indented\n\t! tab\nk=v # not a comment", map[string]string{"k": "v # not a comment"}},
		{"a comment's trailing backslash does not continue", "# c \\\nk=v", map[string]string{"k": "v"}},
		{"no ${} expansion", "k=${user.home}/x\nj=$k", map[string]string{"k": "${user.home}/x", "j": "$k"}},
		{"a later duplicate wins", "k=1\nk=2", map[string]string{"k": "2"}},
		{"values trimmed like Spark", "k = v \t \nj=\\tv\\t", map[string]string{"k": "v", "j": "v"}},
		{"escaped CR and LF kept at the ends", `k=\nv\r`, map[string]string{"k": "\nv\r"}},
		{"byte order mark", "\uFEFFspark.master=local", map[string]string{"spark.master": "local"}},
		{"blank lines only", " \n\t\r\n\f\n", map[string]string{}},
		{"empty", "", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := actor.NewConf()
			if err := c.LoadProperties(strings.NewReader(tt.in)); err != nil {
				t.Fatalf("LoadProperties(%q): %v", tt.in, err)
			}
			if got := c.All(); !maps.Equal(got, tt.want) {
				t.Errorf("LoadProperties(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A properties file that cannot be read is a *PropertiesError naming the
// line where the bad entry starts, and the conf is left unchanged.
func TestLoadPropertiesErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		err  error
	}{
		{"bad hex digits", `k=\u00zz`, 1, actor.ErrMalformedEscape},
		{"short escape at the end", "a=1\n" + `k=\u12`, 2, actor.ErrMalformedEscape},
		{"bad escape in a continued entry", "a=1\\\n2\r\nb=x\\\n  \\uXYZW", 3, actor.ErrMalformedEscape},
		{"empty key", "a=1\n\n=value", 3, actor.ErrEmptyKey},
		{"separator alone", "  : value", 1, actor.ErrEmptyKey},
		{"not UTF-8", "a=1\rb=caf\xe9", 2, actor.ErrInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := actor.NewConf().Set("x", "y")
			err := c.LoadProperties(strings.NewReader(tt.in))
			var pe *actor.PropertiesError
			if !errors.As(err, &pe) || !errors.Is(err, tt.err) || pe.Line != tt.line {
				t.Fatalf("LoadProperties(%q) = %v, want a *PropertiesError at line %d: %v", tt.in, err, tt.line, tt.err)
			}
			if got := c.All(); !maps.Equal(got, map[string]string{"x": "y"}) {
				t.Errorf("a failed load changed the conf: %v", got)
			}
		})
	}
}

// Any input loads or fails with a *PropertiesError; nothing panics.
func FuzzLoadProperties(f *testing.F) {
	for _, s := range []string{"a=b", `a\=b=c`, "k=a\\\r\n  b", `k=\uD83D\uDE00`, "# c\n!d\nk", `k=\u00z`, "\\\n#c\n=v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := actor.NewConf().LoadProperties(strings.NewReader(s))
		var pe *actor.PropertiesError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("LoadProperties(%q) = %v, not a *PropertiesError", s, err)
		}
	})
}

// TestStorePropertiesRoundTrip checks that what StoreProperties writes,
// LoadProperties reads back unchanged, for keys and values that need
// escaping in a properties file.
func TestStorePropertiesRoundTrip(t *testing.T) {
	in := map[string]string{
		"spark.plain":          "value",
		"key with spaces":      "v",
		"k=eq:colon#hash!bang": "a=b:c#d!e",
		"spark.backslash":      `C:\dir\file`,
		"spark.lines":          "one\ntwo\r\nthree",
		"spark.tabs":           "a\tb\fc",
		"spark.inner.space":    "a  b",
		"spark.control":        "x\x01y",
		"spark.unicode":        "héllo \u2603 \U0001F600",
		"spark.empty":          "",
		"#starts.with.hash":    "!bang",
	}
	var buf bytes.Buffer
	if err := actor.StoreProperties(&buf, in); err != nil {
		t.Fatal(err)
	}
	c := actor.NewConf()
	if err := c.LoadProperties(&buf); err != nil {
		t.Fatalf("LoadProperties of %q: %v", buf.String(), err)
	}
	if got := c.All(); !maps.Equal(got, in) {
		t.Errorf("round trip changed the pairs:\n got %q\nwant %q\nfile:\n%s", got, in, buf.String())
	}
}
