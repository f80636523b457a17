// Package messages holds the protobuf messages that cross a process
// boundary in sparkrpc: endpoint references, RPC failures and the lookup
// protocol of the endpoint-verifier, the file server's protocol (streams of
// chunks, fileserver.proto), the transport's wire frames, the cluster
// messages of the scheduler backend, the resource-manager protocol and the
// benchmark messages.
//
// The Go files named *.pb.go are generated from the .proto files beside
// them and are committed: *_vtproto.pb.go hold vtprotobuf's reflection-free
// marshal, unmarshal, size and clone methods, which the netty transport
// uses (several times faster than protobuf-go's generic codec; the wire
// format is the same). After editing a .proto file, regenerate them with
//
//	go generate ./messages
//
// which needs protoc 3.21 on PATH (Debian's protobuf-compiler package); the
// protoc-gen-go and protoc-gen-go-vtproto plugins are built from the
// versions pinned in go.mod. CI regenerates and fails if the committed code
// is stale. Applications' own messages get the same fast path when they are
// generated with protoc-gen-go-vtproto (features marshal+unmarshal+size+clone);
// without it they go through protobuf-go's codec.
//
// Messages are immutable once sent: a local send passes the pointer without
// copying it, so neither the sender nor the receiver may modify it after.
package messages

//go:generate sh ./generate.sh
