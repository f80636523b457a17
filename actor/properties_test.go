package actor_test

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
)

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
