// MemNetwork: an in-memory Transport for tests.

package actor

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	protoactor "github.com/asynkron/protoactor-go/actor"
	"github.com/sparkrpc/sparkrpc/messages"
	"google.golang.org/protobuf/proto"
)

// MemNetwork is an in-memory network: envs whose transports come from the
// same MemNetwork reach each other without sockets. Messages are copied on
// the way (as they would be by a wire), connections are established on first
// use and reported as network events, and a transport's Shutdown
// disconnects its peers. It exists for tests of code built on actor, and for
// the contract tests that run the same cases over every transport.
type MemNetwork struct {
	mu      sync.Mutex
	nodes   map[string]*memTransport
	links   map[[2]string]bool
	clients int
}

// NewMemNetwork returns an empty in-memory network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{nodes: make(map[string]*memTransport), links: make(map[[2]string]bool)}
}

// Transport returns a transport that listens at host:port on n. Starting two
// transports at the same address fails.
func (n *MemNetwork) Transport(host string, port int) Transport {
	addr := NewRpcAddress(host, port)
	return &memTransport{net: n, info: TransportInfo{Identity: addr.HostPort(), Address: addr}}
}

// ClientTransport returns a transport in client mode (it does not listen; it
// is reachable only by the peers it has contacted).
func (n *MemNetwork) ClientTransport() Transport {
	n.mu.Lock()
	n.clients++
	id := "mem-client-" + strconv.Itoa(n.clients)
	n.mu.Unlock()
	return &memTransport{net: n, info: TransportInfo{Identity: id, ClientMode: true}}
}

type memTransport struct {
	net     *MemNetwork
	info    TransportInfo
	host    TransportHost
	maxSize int
}

func (t *memTransport) Start(host TransportHost) (TransportInfo, error) {
	max, err := host.Conf().MaxMessageSize()
	if err != nil {
		return TransportInfo{}, err
	}
	t.host, t.maxSize = host, max
	t.net.mu.Lock()
	defer t.net.mu.Unlock()
	if _, taken := t.net.nodes[t.info.Identity]; taken {
		return TransportInfo{}, fmt.Errorf("memnetwork: address %s already in use", t.info.Identity)
	}
	t.net.nodes[t.info.Identity] = t
	return t.info, nil
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func (t *memTransport) Send(target, sender *protoactor.PID, msg proto.Message) error {
	if sender == nil && isFutureID(target.Id) {
		// A reply: like the TCP transport, one that cannot cross the wire
		// fails its asker at once instead of leaving it to time out.
		msg = t.sendableReply(target, msg)
	}
	if size := proto.Size(msg); size > t.maxSize {
		return &MessageTooLargeError{Size: size, Limit: t.maxSize}
	}
	t.net.mu.Lock()
	peer := t.net.nodes[target.Address]
	if peer == nil || (peer.info.ClientMode && !t.net.links[pairKey(t.info.Identity, peer.info.Identity)]) {
		t.net.mu.Unlock()
		return &ConnectionClosedError{Addr: target.Address, Cause: fmt.Errorf("memnetwork: connection refused")}
	}
	key := pairKey(t.info.Identity, peer.info.Identity)
	fresh := !t.net.links[key]
	t.net.links[key] = true
	t.net.mu.Unlock()
	if fresh {
		t.host.Connected(Peer{Identity: peer.info.Identity, Address: t.PeerAddress(peer.info.Identity)})
		peer.host.Connected(Peer{Identity: t.info.Identity, Address: peer.PeerAddress(t.info.Identity)})
	}
	if sender == nil && isFutureID(target.Id) {
		// A reply goes to its ask only if the ask went to this env.
		if r, st := peer.host.LookupReply(t.info.Identity, []byte(target.Id)); st == ReplyPending {
			r.Complete(proto.Clone(msg))
		}
		return nil
	}
	peer.host.Deliver(target, Inbound{Sender: sender, Msg: proto.Clone(msg), From: t.info.Identity})
	return nil
}

// PeerAddress returns the listen address of a listening peer, or a made-up
// socket address "mem-client-N:0" for a client-mode peer.
func (t *memTransport) PeerAddress(identity string) RpcAddress {
	t.net.mu.Lock()
	peer := t.net.nodes[identity]
	t.net.mu.Unlock()
	if peer == nil {
		return RpcAddress{}
	}
	if peer.info.ClientMode {
		return RpcAddress{Host: identity, Port: 0}
	}
	return peer.info.Address
}

func (t *memTransport) Shutdown(context.Context) error {
	t.net.mu.Lock()
	delete(t.net.nodes, t.info.Identity)
	var peers []*memTransport
	for key := range t.net.links {
		if key[0] != t.info.Identity && key[1] != t.info.Identity {
			continue
		}
		other := key[0]
		if other == t.info.Identity {
			other = key[1]
		}
		delete(t.net.links, key)
		if p := t.net.nodes[other]; p != nil {
			peers = append(peers, p)
		}
	}
	t.net.mu.Unlock()
	me := Peer{Identity: t.info.Identity, Address: t.info.Address}
	if t.info.ClientMode {
		me.Address = RpcAddress{Host: t.info.Identity, Port: 0}
	}
	for _, p := range peers {
		p.host.Disconnected(me, nil)
	}
	return nil
}

// sendableReply returns msg, or the failure its asker gets instead when msg
// is too large: an RpcFailure of code TOO_LARGE, or a failure made valid
// UTF-8 and cut to fit (see FitFailure).
func (t *memTransport) sendableReply(target *protoactor.PID, msg proto.Message) proto.Message {
	f, isFailure := msg.(*messages.RpcFailure)
	if !isFailure {
		size := proto.Size(msg)
		if size <= t.maxSize {
			return msg
		}
		err := &MessageTooLargeError{Size: size, Limit: t.maxSize}
		log := t.host.Logger()
		log.Warn().Err(err).Str("to", target.String()).Msg("reply cannot be sent; failing the asker")
		f = FailureToProto(err)
	}
	if fitted := FitFailure(f, t.maxSize); fitted != f {
		log := t.host.Logger()
		log.Warn().Str("to", target.String()).Msg("failure reply cannot be sent as it is; sending it sanitized")
		return fitted
	}
	return f
}
