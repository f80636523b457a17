package actor_test

import (
	"errors"
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
