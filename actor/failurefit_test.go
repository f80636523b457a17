package actor_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func TestFitFailure(t *testing.T) {
	ok := &messages.RpcFailure{Code: messages.ErrorCode_ERROR_CODE_APPLICATION, Message: "fine", Type: "*errors.errorString"}
	if got := actor.FitFailure(ok, 1<<20); got != ok {
		t.Errorf("a failure that fits was changed: %v", got)
	}
	bad := &messages.RpcFailure{Message: "open \xff\xfe.txt: no such file", Cause: "x\xc3"}
	got := actor.FitFailure(bad, 1<<20)
	if _, err := proto.Marshal(got); err != nil {
		t.Fatalf("fitted failure does not marshal: %v", err)
	}
	if !strings.HasSuffix(got.Message, actor.InvalidUTF8Marker) || !strings.HasSuffix(got.Cause, actor.InvalidUTF8Marker) {
		t.Errorf("no marker: %q, %q", got.Message, got.Cause)
	}
	if bad.Message != "open \xff\xfe.txt: no such file" {
		t.Errorf("the original was modified")
	}
	// A fitted failure keeps what the asker rebuilds a typed error from,
	// made valid, as long as there is room for it.
	named := &messages.RpcFailure{Code: messages.ErrorCode_ERROR_CODE_NOT_FOUND, Message: "Could not find \xff.", Subject: "\xff"}
	if got := actor.FitFailure(named, 1<<20); got.Code != named.Code || got.Subject != "\uFFFD"+actor.InvalidUTF8Marker {
		t.Errorf("fitted subject %q, want it made valid and marked", got.Subject)
	}
	long := &messages.RpcFailure{Code: messages.ErrorCode_ERROR_CODE_UNSUPPORTED_MESSAGE, Message: strings.Repeat("m", 500), Subject: "T", From: "F"}
	if got := actor.FitFailure(long, 200); proto.Size(got) > 200 || got.Subject != "" || got.From != "" {
		t.Errorf("cut failure: size %d, subject %q, from %q; want it under 200 bytes, without them", proto.Size(got), got.Subject, got.From)
	}
	// Fields it cannot cut (unknown ones, from a newer peer) leave it the
	// code, and the sizes when they fit.
	huge := &messages.RpcFailure{Code: messages.ErrorCode_ERROR_CODE_TOO_LARGE, Message: strings.Repeat("m", 500), Size: 300, Limit: 200}
	huge.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), make([]byte, 100)))
	if got := actor.FitFailure(huge, 12); proto.Size(got) > 12 || got.Size != 300 || got.Limit != 200 {
		t.Errorf("a failure cut to its code: %v (%d bytes), want the sizes kept within 12 bytes", got, proto.Size(got))
	}
	big := &messages.RpcFailure{Message: strings.Repeat("é", 5000), Cause: strings.Repeat("c", 3000), Type: "T"}
	for _, limit := range []int{9000, 4000, 200, 60, 3} {
		got := actor.FitFailure(big, limit)
		if n := proto.Size(got); n > limit {
			t.Errorf("limit %d: size %d", limit, n)
		}
		if !utf8.ValidString(got.Message) || !utf8.ValidString(got.Cause) {
			t.Errorf("limit %d: cut inside a character", limit)
		}
		if limit >= 200 && !strings.Contains(got.Message, "truncated") {
			t.Errorf("limit %d: no truncation marker in %q", limit, got.Message)
		}
	}
}

// A remote ask that fails with a text that is not valid UTF-8, or with a
// failure larger than spark.rpc.message.maxSize, fails its asker at once,
// marked, instead of leaving it to time out.
func TestMemNetworkUnsendableFailureReachesAsker(t *testing.T) {
	n := actor.NewMemNetwork()
	conf := actor.NewConf().Set(actor.KeyMessageMaxSize, "1")
	server := newEnv(t, conf, actor.WithTransport(n.Transport("host1", 1)))
	client := newEnv(t, nil, actor.WithTransport(n.ClientTransport()))
	register(t, server, "failing", &testEndpoint{ask: func(ctx *actor.CallContext, msg proto.Message) error {
		switch text(msg) {
		case "utf8":
			ctx.SendFailure(errors.New("open /tmp/\xff\xfe: no such file"))
		case "huge":
			ctx.SendFailure(errors.New(strings.Repeat("x", 2<<20)))
		case "huge-reply":
			ctx.Reply(str(strings.Repeat("y", 2<<20)))
		}
		return nil
	}})
	ref := setupRef(t, client, server, "failing")
	timeout := actor.RpcTimeout{Duration: time.Minute, Key: "test.askTimeout"}
	for q, marker := range map[string]string{"utf8": actor.InvalidUTF8Marker, "huge": "truncated", "huge-reply": ""} {
		start := time.Now()
		_, err := ref.AskSyncWithTimeout(testutil.Context(t, testTimeout), str(q), timeout)
		var re *actor.RemoteError
		if !errors.As(err, &re) || errors.Is(err, actor.ErrTimeout) {
			t.Errorf("%s: err = %v, want a *RemoteError", q, err)
			continue
		}
		if !utf8.ValidString(re.Message) || len(re.Message) > 1<<20 || !strings.Contains(re.Message, marker) {
			t.Errorf("%s: message (%d bytes) %.100q", q, len(re.Message), re.Message)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %s", q, d)
		}
	}
}
