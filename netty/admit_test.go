package netty_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// garbage is a payload no message type decodes: a frame that carries it
// and gets any other answer than a decode failure was not decoded.
var garbage = []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}

// askRaw sends an ask of type typ with payload to target over a raw
// connection and returns the failure it is answered with.
func askRaw(t *testing.T, server *actor.Env, target, typ string, payload []byte) *messages.RpcFailure {
	t.Helper()
	c, r := rawClient(t, server, "client-raw")
	writeMsg(t, c, &messages.WireEnvelope{Target: target, SenderId: "future$.raw", Type: typ, Payload: payload})
	var f messages.RpcFailure
	e := readEnvelope(t, r, nil)
	if e.GetType() != "sparkrpc.messages.RpcFailure" {
		t.Fatalf("answered with a %s, want a failure", e.GetType())
	}
	if err := proto.Unmarshal(e.GetPayload(), &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// A frame for a name that runs no endpoint is answered "not found" without
// its payload being decoded.
func TestFrameForMissingTargetIsNotDecoded(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	f := askRaw(t, server, "missing", "google.protobuf.StringValue", garbage)
	if f.GetCode() != messages.ErrorCode_ERROR_CODE_NOT_FOUND {
		t.Fatalf("failure = %v, want NOT_FOUND without a decode", f)
	}
}

// routerOnly handles StringValue asks only.
func routerOnly() *actor.Router {
	r := actor.NewRouter()
	actor.HandleAsk(r, func(_ *actor.CallContext, m *wrapperspb.StringValue) (*wrapperspb.StringValue, error) { return m, nil })
	return r
}

// acceptsInt64 is an endpoint with a type switch that says it takes
// Int64Value only.
type acceptsInt64 struct{ *echo }

func (acceptsInt64) Accepts(name protoreflect.FullName) bool {
	return name == "google.protobuf.Int64Value"
}

// A frame of a type its endpoint does not take (a Router without a handler
// for it, an Acceptor that refuses it) is refused without being decoded.
func TestFrameOfRefusedTypeIsNotDecoded(t *testing.T) {
	server, tr := serverWithTransport(t, nil)
	register(t, server, "router", routerOnly())
	register(t, server, "int64s", acceptsInt64{newEcho()})
	for _, target := range []string{"router", "int64s"} {
		f := askRaw(t, server, target, "google.protobuf.BytesValue", garbage)
		// The asker reads what a local refusal says (actor's
		// UnsupportedMessageError), and which endpoint refused.
		if f.GetCode() != messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE ||
			!strings.HasPrefix(f.GetMessage(), "Unsupported message google.protobuf.BytesValue from ") || !strings.Contains(f.GetMessage(), target+" does not take it") {
			t.Fatalf("%s: failure = %v, want UNSUPPORTED_MESSAGE without a decode", target, f)
		}
	}
	if n := tr.Stats().RefusedTypes; n != 2 {
		t.Errorf("RefusedTypes = %d, want 2", n)
	}
	// What they take still arrives.
	client := newClientEnv(t, "good", nil)
	if got := askString(t, client.RemoteRef(server.Address(), "router"), "taken"); got != "taken" {
		t.Fatalf("got %q", got)
	}
	res, err := client.RemoteRef(server.Address(), "int64s").AskSync(testutil.Context(t, waitFor), wrapperspb.Int64(7))
	if err != nil || res.(*wrapperspb.Int64Value).GetValue() != 7 {
		t.Fatalf("ask of an accepted type = %v, %v", res, err)
	}
	// And a one-way message of a refused type is dropped, counted.
	before := server.Dropped()
	if err := client.RemoteRef(server.Address(), "int64s").Send(str("refused")); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RemoteRef(server.Address(), "int64s").AskSync(testutil.Context(t, waitFor), wrapperspb.Int64(8)); err != nil {
		t.Fatal(err)
	}
	if got := server.Dropped() - before; got != 1 {
		t.Errorf("dropped %d one-way messages, want 1", got)
	}
}

// An ask made with AskAs takes a reply of its type (or a failure) only: a
// reply of another type fails it without being decoded.
func TestAskAsRefusesAReplyOfAnotherType(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	register(t, server, "echo", newEcho())
	client := newClientEnv(t, "client", nil)
	_, err := actor.AskAs[*wrapperspb.Int64Value](testutil.Context(t, waitFor), client.RemoteRef(server.Address(), "echo"), str("a string back"))
	var re *actor.RemoteError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "does not take") {
		t.Fatalf("AskAs with a reply of another type = %v, want a refusal before decoding", err)
	}
	got, err := actor.AskAs[*wrapperspb.StringValue](testutil.Context(t, waitFor), client.RemoteRef(server.Address(), "echo"), str("same type"))
	if err != nil || got.GetValue() != "same type" {
		t.Fatalf("AskAs of the reply's type = %v, %v", got, err)
	}
}
