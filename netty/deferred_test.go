package netty_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Messages larger than the reader's buffer, which the endpoint's loop
// decodes, keep their place among the small ones a connection carries,
// one-way and asked, and arrive whole.
func TestLargeMessagesKeepTheirOrder(t *testing.T) {
	server := newEnv(t, "server", nil)
	ep := newEcho()
	register(t, server, "echo", ep)
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "echo")

	sizes := []int{10, 100 << 10, 20, 300 << 10, 70 << 10, 30}
	payload := func(i, n int) []byte {
		b := bytes.Repeat([]byte{byte(i + 1)}, n)
		copy(b, fmt.Sprint(i))
		return b
	}
	for i, n := range sizes {
		if err := ref.Send(wrapperspb.Bytes(payload(i, n))); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range sizes {
		got := testutil.Recv(t, ep.got, waitFor, "a message").(*wrapperspb.BytesValue).GetValue()
		if !bytes.Equal(got, payload(i, n)) {
			t.Fatalf("message %d: %d bytes starting %q, want %d starting %q", i, len(got), got[:min(len(got), 8)], n, fmt.Sprint(i))
		}
	}
	for i, n := range sizes {
		r, err := actor.AskAs[*wrapperspb.BytesValue](testutil.Context(t, waitFor), ref, wrapperspb.Bytes(payload(i, n)))
		if err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
		if !bytes.Equal(r.GetValue(), payload(i, n)) {
			t.Fatalf("ask %d: reply of %d bytes differs from the %d asked", i, len(r.GetValue()), n)
		}
	}
}

// A request larger than the reader's buffer that cannot be decoded fails
// its asker with an RpcFailure of code DECODE, from the endpoint's loop,
// and the connection keeps working.
func TestLargeUndecodableRequestFailsTheAsker(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	register(t, server, "echo", newEcho())
	c, r := rawClient(t, server, "client-raw")
	// Field 1 of a BytesValue claims more bytes than the payload holds.
	bad := append([]byte{0x0a, 0xff, 0xff, 0xff, 0x7f}, make([]byte, 100<<10)...)
	writeMsg(t, c, &messages.WireEnvelope{Target: "echo", SenderAddress: rawID("client-raw"), SenderId: "future$1", Type: "google.protobuf.BytesValue", Payload: bad})
	var back messages.WireEnvelope
	readMsg(t, r, &back)
	var f messages.RpcFailure
	if back.Target != "future$1" || back.Type != "sparkrpc.messages.RpcFailure" {
		t.Fatalf("reply %v", &back)
	}
	if err := proto.Unmarshal(back.Payload, &f); err != nil || f.Code != messages.ErrorCode_ERROR_CODE_DECODE {
		t.Fatalf("failure %v, %v", &f, err)
	}
	good, _ := proto.Marshal(wrapperspb.Bytes(make([]byte, 100<<10)))
	writeMsg(t, c, &messages.WireEnvelope{Target: "echo", SenderAddress: rawID("client-raw"), SenderId: "future$2", Type: "google.protobuf.BytesValue", Payload: good})
	readMsg(t, r, &back)
	var v wrapperspb.BytesValue
	if err := proto.Unmarshal(back.Payload, &v); back.Target != "future$2" || err != nil || len(v.GetValue()) != 100<<10 {
		t.Fatalf("the next ask: reply %s of %d bytes (%v)", back.Target, len(v.GetValue()), err)
	}
}
