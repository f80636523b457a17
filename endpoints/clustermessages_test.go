package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// clusterMessage builds the cluster message name (in package
// sparkrpc.messages) with its one string field set to value, or fails the
// test when the message is not part of the protocol.
func clusterMessage(t *testing.T, name, field, value string) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("sparkrpc.messages." + name))
	if err != nil {
		t.Fatalf("Spark's CoarseGrainedClusterMessages.%s is not in messages/cluster.proto: %v", name, err)
	}
	m := mt.New()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(field))
	if fd == nil {
		t.Fatalf("%s has no field %s", name, field)
	}
	m.Set(fd, protoreflect.ValueOfString(value))
	return m.Interface()
}

// Spark's DriverEndpoint answers IsExecutorAlive(id) (asked by the
// BlockManagerMaster) with whether the executor is registered and active.
// Before, there was no such message: design.md claimed Spark's whole set.
func TestDriverAnswersIsExecutorAlive(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Driver.WaitForExecutors(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id := c.Driver.Executors()[0].ID
	for id, want := range map[string]bool{id: true, "nope": false} {
		res, err := actor.AskAs[*messages.BoolReply](ctx, c.Driver.Ref(), clusterMessage(t, "IsExecutorAlive", "executor_id", id))
		if err != nil || res.GetValue() != want {
			t.Errorf("IsExecutorAlive(%q) = %v, %v; want %v", id, res, err, want)
		}
	}
}

// Spark's DriverEndpoint kills every executor of a host on
// KillExecutorsOnHost(host) (sent by the health tracker with
// spark.excludeOnFailure.killExcludedExecutors). Before, there was no such
// message.
func TestDriverKillsExecutorsOnHost(t *testing.T) {
	c := startCluster(t, memNetwork(), testConf(), 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Driver.WaitForExecutors(ctx, 2); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, ex := range c.Driver.Executors() {
		ids = append(ids, ex.ID)
	}
	if err := c.Driver.Ref().Send(clusterMessage(t, "KillExecutorsOnHost", "host", "localhost")); err != nil {
		t.Fatal(err)
	}
	if err := c.Driver.WaitForExecutorsGone(ctx, ids...); err != nil {
		t.Fatalf("executors on localhost after KillExecutorsOnHost: %v (%v)", err, c.Driver.Executors())
	}
}
