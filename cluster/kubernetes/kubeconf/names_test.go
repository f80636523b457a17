package kubeconf

import (
	"strings"
	"testing"
)

func TestResourceNamePrefix(t *testing.T) {
	for _, name := range []string{"SparkPi", "my app_2", "123abc", strings.Repeat("long", 30), "--x--"} {
		p := ResourceNamePrefix(name)
		if len(p) > MaxPrefixLen || !dnsLabelRe.MatchString(p) || p[0] >= '0' && p[0] <= '9' {
			t.Errorf("ResourceNamePrefix(%q) = %q", name, p)
		}
	}
	if a, b := ResourceNamePrefix("x"), ResourceNamePrefix("x"); a == b {
		t.Errorf("two prefixes are equal: %s", a)
	}
	if l := AppNameLabel("My App/1"); l != "my-app-1" {
		t.Errorf("AppNameLabel = %q", l)
	}
}
