package netty_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
)

// vtprotobuf's decoder keeps unknown groups that protobuf-go refuses:
// nested past protowire's recursion limit, or ended by another field
// number. These tests hold the transport's checks to protobuf-go's on them.

// nestedGroups returns an unknown group, field num, nested depth deep.
func nestedGroups(num protowire.Number, depth int) []byte {
	b := make([]byte, 0, 2*depth*protowire.SizeTag(num))
	for range depth {
		b = protowire.AppendTag(b, num, protowire.StartGroupType)
	}
	for range depth {
		b = protowire.AppendTag(b, num, protowire.EndGroupType)
	}
	return b
}

// askDecodeFailure sends payload, a message of type typ, as an ask to the
// server's echo endpoint over a raw connection and returns the failure it
// answers with, which must be a DECODE failure; the server must serve on.
func askDecodeFailure(t *testing.T, typ string, payload []byte) *messages.RpcFailure {
	t.Helper()
	server, _ := serverWithTransport(t, nil)
	register(t, server, "echo", newEcho())
	client, r := rawClient(t, server, "client-groups")
	writeMsg(t, client, &messages.WireEnvelope{Target: "echo", SenderId: "future$.groups", Type: typ, Payload: payload})
	e := readEnvelope(t, r, nil)
	if e.GetType() != "sparkrpc.messages.RpcFailure" {
		t.Fatalf("the server decoded the %s and answered with a %s of %d bytes, want a DECODE failure", typ, e.GetType(), len(e.GetPayload()))
	}
	var f messages.RpcFailure
	if err := protoUnmarshal(e.GetPayload(), &f); err != nil {
		t.Fatal(err)
	}
	if f.GetCode() != messages.ErrorCode_ERROR_CODE_DECODE {
		t.Fatalf("failure = %v, want a DECODE failure", &f)
	}
	stillServes(t, server)
	return &f
}

// An unknown group that the decode bound's scan cannot parse is refused
// there, before the decode: before, the scan accepted the frame at the
// first bytes it could not parse, and the rest of the payload, 1 MiB that
// decodes to some 40 MiB, was decoded unscanned (and, after a group nested
// 20,000 deep, which the later checks took, delivered).
func TestUnparsableUnknownGroupsAreRefusedByTheDecodeBound(t *testing.T) {
	empty := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.BytesType), 0)
	amplifying := bytes.Repeat(empty, 512<<10)
	ended := protowire.AppendTag(protowire.AppendTag(nil, 1000, protowire.StartGroupType), 1001, protowire.EndGroupType)
	for _, tc := range []struct {
		name  string
		group []byte
	}{
		{"nested 20,000 deep", nestedGroups(1000, 20000)},
		{"ended by another field number", ended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := askDecodeFailure(t, "sparkrpc.messages.AmAllocateResponse", append(tc.group, amplifying...))
			if !strings.Contains(f.GetMessage(), "decode bound") {
				t.Fatalf("failure = %q, want the decode bound's refusal (before the decode)", f.GetMessage())
			}
		})
	}
}

// deepGroupsEnv makes the test binary the server of
// TestDeeplyNestedUnknownGroupsDoNotOverflowTheStack, with this stack limit.
const deepGroupsEnv = "NETTY_TEST_DEEP_GROUPS_STACK"

// A frame of unknown groups nested a million and a half deep, in a message
// of a flat type (which the decode bound does not scan), is refused as
// undecodable, and the process serves on. Before, the check of its unknown
// fields recursed once a level and overflowed the reader's stack, a fatal
// error of the whole process (here with a stack limit of 64 MiB and a 3 MB
// frame; with Go's default of 1 GB a 34 MB frame did the same). The server
// runs in a child process, which the overflow would kill.
func TestDeeplyNestedUnknownGroupsDoNotOverflowTheStack(t *testing.T) {
	if s := os.Getenv(deepGroupsEnv); s != "" {
		limit, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		debug.SetMaxStack(limit)
		askDecodeFailure(t, "sparkrpc.messages.BenchPing", nestedGroups(15, 1_500_000)) // 15: unknown to BenchPing
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDeeplyNestedUnknownGroupsDoNotOverflowTheStack$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), deepGroupsEnv+"="+strconv.Itoa(64<<20))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the server's process died on a frame of nested unknown groups: %v\n%.1500s", err, out)
	}
}
