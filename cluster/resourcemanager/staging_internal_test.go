package resourcemanager

import (
	"bytes"
	"maps"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
)

// TestStagedConfReadsBack checks that the conf the resource manager stages
// for an application master reads back to the same pairs, also for keys
// and values that need escaping in a properties file.
func TestStagedConfReadsBack(t *testing.T) {
	in := map[string]string{
		"spark.app.name":         "my app: #1 = first!",
		"spark.driver.extraPath": `C:\spark\bin`,
		"spark.lines":            "a\r\nb",
		"key with space":         "value",
	}
	c := actor.NewConf()
	if err := c.LoadProperties(bytes.NewReader(cluster.PropertiesText(in))); err != nil {
		t.Fatal(err)
	}
	if got := c.All(); !maps.Equal(got, in) {
		t.Errorf("staged conf read back as %q, want %q", got, in)
	}
}
