package netty

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// refReader reads the one-way Int64 messages a connection carries to
// target, resolving the references the sender defines on it.
type refReader struct {
	fr    *frameReader
	refs  map[uint64]string // ref -> target
	grant net.Conn          // when set, every message read is granted back on it
}

func (r *refReader) next() (int64, bool, error) {
	for {
		b, err := r.fr.next()
		if err != nil {
			return 0, false, err
		}
		e, err := parseEnvelope(b)
		if err != nil {
			return 0, false, err
		}
		if e.ref != 0 {
			tg, ok := r.refs[e.ref]
			if !ok {
				return 0, false, errors.New("frame by an undefined reference")
			}
			e.target = []byte(tg)
		}
		if isCreditFrame(e.target) {
			if string(e.typ) == refDefine {
				ref, n := protowire.ConsumeVarint(e.payload)
				tg, _ := protowire.ConsumeBytes(e.payload[n:])
				r.refs[ref] = string(tg)
			}
			continue
		}
		var v wrapperspb.Int64Value
		if err := proto.Unmarshal(e.payload, &v); err != nil {
			return 0, false, err
		}
		if r.grant != nil {
			r.grant.Write(appendControl(nil, creditGrant, creditPayload(nil, 1, frameCharge(len(b)), string(e.target)))) //nolint:errcheck
		}
		return v.Value, true, nil
	}
}

// A client-mode peer that reconnects while the server streams to it gets
// every message once, in order, over the old connection and then the new
// one (what the old connection could not write is counted as dropped),
// and can resolve every reference on the connection it reads it on.
func TestStreamToAReconnectingClientKeepsOrder(t *testing.T) {
	tr := NewTransport(WithLogger(zerolog.Nop()))
	server := testServer(t, tr)
	const name = "client-crossing"
	id := testClient(name).identity
	addr := server.Address().HostPort()
	offer := appendControl(nil, creditOffer, creditPayload(nil, 64, 1<<30, ""))
	for round := range 5 {
		old, oldFr := dialAs(t, addr, name)
		if _, err := old.Write(offer); err != nil {
			t.Fatal(err)
		}
		oldR := &refReader{fr: oldFr, refs: map[uint64]string{}, grant: old}
		const n = 20000
		sent := make(chan int64, 1)
		go func() {
			var failed int64
			for i := range int64(n) {
				if err := tr.Send(&protoactor.PID{Address: id, Id: "sink"}, nil, wrapperspb.Int64(i)); err != nil {
					failed++
				}
			}
			sent <- failed
		}()
		var got []int64
		for len(got) < 2000 {
			v, ok, err := oldR.next()
			if err != nil {
				t.Fatalf("round %d: old connection: %v", round, err)
			}
			if ok {
				got = append(got, v)
			}
		}
		cur, curFr := dialAs(t, addr, name) // replaces old
		if _, err := cur.Write(offer); err != nil {
			t.Fatal(err)
		}
		for {
			v, ok, err := oldR.next()
			if err != nil {
				// The server closes the replaced connection with the
				// client's credit grants unread: a reset, not an EOF.
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrProtocol) && !errors.Is(err, net.ErrClosed) &&
					!errors.Is(err, syscall.ECONNRESET) {
					t.Fatalf("round %d: old connection: %v", round, err)
				}
				break
			}
			if ok {
				got = append(got, v)
			}
		}
		old.Close()
		failed := <-sent
		curR := &refReader{fr: curFr, refs: map[uint64]string{}, grant: cur}
		cur.SetReadDeadline(time.Now().Add(2 * time.Second)) //nolint:errcheck
		for len(got) == 0 || got[len(got)-1] != n-1 {
			v, ok, err := curR.next()
			if err != nil {
				break
			}
			if ok {
				got = append(got, v)
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("round %d: %d after %d", round, got[i], got[i-1])
			}
		}
		dropped := server.Dropped()
		t.Logf("round %d: got %d of %d, send failures %d, dropped so far %d", round, len(got), n, failed, dropped)
		cur.Close()
	}
}
