package netty_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// failing fails every ask as its text says.
type failing struct{}

func (failing) Receive(*actor.Context, proto.Message) error { return nil }
func (failing) ReceiveAndReply(ctx *actor.CallContext, msg proto.Message) error {
	switch msg.(*wrapperspb.StringValue).GetValue() {
	case "utf8":
		ctx.SendFailure(errors.New("open /tmp/\xff\xfe: no such file"))
	case "huge":
		ctx.SendFailure(errors.New(strings.Repeat("x", 2<<20)))
	case "huge-utf8":
		ctx.SendFailure(errors.New(strings.Repeat("\xffé", 1<<20)))
	}
	return nil
}

// A remote ask that fails with a text that is not valid UTF-8, or with a
// failure larger than spark.rpc.message.maxSize, fails its asker at once,
// marked, instead of leaving it to wait for its ask timeout.
func TestUnsendableFailureReachesAsker(t *testing.T) {
	conf := actor.NewConf().Set(actor.KeyMessageMaxSize, "1")
	server := newEnv(t, "server", conf)
	register(t, server, "failing", failing{})
	client := newClientEnv(t, "client", nil)
	ref := lookup(t, client, server.Address(), "failing")
	timeout := actor.RpcTimeout{Duration: time.Minute, Key: "test.askTimeout"}
	cases := map[string][]string{
		"utf8":      {actor.InvalidUTF8Marker},
		"huge":      {"truncated"},
		"huge-utf8": {"truncated", "\uFFFD"},
	}
	for q, markers := range cases {
		start := time.Now()
		_, err := ref.AskSyncWithTimeout(testutil.Context(t, waitFor), str(q), timeout)
		var re *actor.RemoteError
		if !errors.As(err, &re) || errors.Is(err, actor.ErrTimeout) || re.Code != messages.ErrorCode_ERROR_CODE_APPLICATION {
			t.Errorf("%s: err = %.200v, want a *RemoteError of code APPLICATION", q, err)
			continue
		}
		if !utf8.ValidString(re.Message) || len(re.Message) > 1<<20 {
			t.Errorf("%s: message of %d bytes, valid UTF-8 %v", q, len(re.Message), utf8.ValidString(re.Message))
		}
		for _, m := range markers {
			if !strings.Contains(re.Message, m) {
				t.Errorf("%s: no %q in %.100q...%q", q, m, re.Message, re.Message[max(0, len(re.Message)-100):])
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %s", q, d)
		}
	}
}
