package endpoints_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

// A job whose results add up to more than spark.driver.maxResultSize is
// aborted with ErrResultTooLarge, as Spark aborts such an action, and the
// driver runs the next job. Before, the key was not read: the driver held
// every result, however large their sum.
func TestMaxResultSizeAbortsTheJob(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(endpoints.KeyMaxResultSize, "100"), 1, 1)
	p := bytes.Repeat([]byte{'x'}, 60)
	_, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{p, p, p})
	if !errors.Is(err, endpoints.ErrResultTooLarge) || !errors.Is(err, endpoints.ErrJobAborted) ||
		!strings.Contains(err.Error(), "(120 bytes) is bigger than spark.driver.maxResultSize (100 bytes)") {
		t.Fatalf("RunJob = %v; want the job aborted for its results' size", err)
	}
	small := bytes.Repeat([]byte{'y'}, 50)
	res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{small, small})
	if err != nil || len(res) != 2 || !bytes.Equal(res[1], small) {
		t.Fatalf("a job at the limit = %d results, %v", len(res), err)
	}
}

// spark.driver.maxResultSize=0 is no limit; a negative size or one that
// does not parse is refused by NewDriver, naming the key.
func TestMaxResultSizeConf(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(endpoints.KeyMaxResultSize, "0"), 1, 1)
	big := bytes.Repeat([]byte{'z'}, 4<<10)
	if _, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{big, big}); err != nil {
		t.Fatalf("RunJob with no limit = %v", err)
	}
	for _, v := range []string{"-1", "1x"} {
		env := memNetwork().driverEnv(t, testConf(endpoints.KeyMaxResultSize, v))
		t.Cleanup(func() { _ = env.Shutdown(context.Background()) })
		if _, err := endpoints.NewDriver(env); err == nil || !strings.Contains(err.Error(), endpoints.KeyMaxResultSize) {
			t.Errorf("NewDriver with %s=%s = %v; want an error naming the key", endpoints.KeyMaxResultSize, v, err)
		}
	}
}
