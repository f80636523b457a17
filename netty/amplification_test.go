package netty_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
)

// A frame of repeated empty sub-messages (2 bytes each on the wire, a
// whole struct each once decoded) is refused before it is decoded: its
// asker gets a DECODE failure that names the bound.
func TestAmplifyingFrameIsRefusedUndecoded(t *testing.T) {
	server, _ := serverWithTransport(t, nil)
	register(t, server, "echo", newEcho())
	client, r := rawClient(t, server, "client-amplifier")
	empty := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 0)
	payload := bytes.Repeat(empty, 512<<10) // 1 MiB: ~40 MiB once decoded
	writeMsg(t, client, &messages.WireEnvelope{Target: "echo", SenderId: "future$.amp",
		Type: "sparkrpc.messages.AmAllocateResponse", Payload: payload})
	var f messages.RpcFailure
	e := readEnvelope(t, r, nil)
	if e.GetType() != "sparkrpc.messages.RpcFailure" {
		t.Fatalf("the server answered with a %s, want an RpcFailure", e.GetType())
	}
	if err := protoUnmarshal(e.GetPayload(), &f); err != nil {
		t.Fatal(err)
	}
	if f.GetCode() != messages.ErrorCode_ERROR_CODE_DECODE || !strings.Contains(f.GetMessage(), "decode bound") {
		t.Fatalf("failure = %v, want a DECODE failure naming the decode bound", &f)
	}
	stillServes(t, server)
}
