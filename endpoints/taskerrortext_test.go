package endpoints_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

func init() {
	// test.bigError fails with an error whose text is as long as its
	// payload says (decimal), as an error that quotes a large input does.
	endpoints.RegisterTask("test.bigError", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		n := 0
		for _, c := range p {
			n = n*10 + int(c-'0')
		}
		return nil, errors.New(strings.Repeat("e", n))
	})
	// test.bigPanic panics with a value as long as its payload says.
	endpoints.RegisterTask("test.bigPanic", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		n := 0
		for _, c := range p {
			n = n*10 + int(c-'0')
		}
		panic(strings.Repeat("p", n))
	})
}

// A task that fails with an error (or panics with a value) whose text is
// larger than spark.rpc.message.maxSize fails its job after
// spark.task.maxFailures attempts, as any failing task does: its FAILED
// status update must reach the driver, or the job waits forever.
// Before, the FAILED update was refused by the transport and only logged:
// the job waited for ever and the executor's core stayed taken.
func TestHugeTaskErrorFailsItsJob(t *testing.T) {
	for _, task := range []string{"test.bigError", "test.bigPanic"} {
		t.Run(task, func(t *testing.T) {
			c := startCluster(t, memNetwork(), testConf(actor.KeyMessageMaxSize, "1", endpoints.KeyTaskMaxFailures, "2"), 1, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := c.Driver.RunJob(ctx, task, [][]byte{[]byte("2000000")})
			if !errors.Is(err, endpoints.ErrTaskFailed) {
				t.Fatalf("RunJob = %.300v; want the job aborted (ErrTaskFailed) after 2 failed attempts", err)
			}
			if len(err.Error()) > 1<<20 {
				t.Errorf("the job's error is %d bytes long", len(err.Error()))
			}
			// The executor's core is free again: the next job runs.
			if res, err := runJob(t, c.Driver, endpoints.EchoTaskName, [][]byte{[]byte("next")}); err != nil || string(res[0]) != "next" {
				t.Fatalf("next job = %q, %v", res, err)
			}
		})
	}
}

func init() {
	// test.binaryError fails with an error that quotes its (binary)
	// payload as is.
	endpoints.RegisterTask("test.binaryError", func(ctx context.Context, tc endpoints.TaskContext, p []byte) ([]byte, error) {
		return nil, errors.New("bad record: " + string(p))
	})
}

// A task whose error text is not valid UTF-8 (it quotes binary input)
// fails its job after spark.task.maxFailures attempts, over TCP too.
// Before, over TCP the update was refused (a protobuf string must be valid
// UTF-8): the job waited for ever and the core stayed taken.
func TestBinaryTaskErrorFailsItsJob(t *testing.T) {
	forEachNetwork(t, func(t *testing.T, nw network) {
		c := startCluster(t, nw, testConf(endpoints.KeyTaskMaxFailures, "2"), 1, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Driver.RunJob(ctx, "test.binaryError", [][]byte{{0xff, 0xfe, 0x00, 'x'}})
		if !errors.Is(err, endpoints.ErrTaskFailed) || !strings.Contains(err.Error(), "bad record") {
			t.Fatalf("RunJob = %v; want the job aborted (ErrTaskFailed) with the task's error", err)
		}
	})
}
