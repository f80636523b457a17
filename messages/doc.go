// Package messages holds the protobuf messages that cross a process
// boundary in sparkrpc: endpoint references, RPC failures and the lookup
// protocol of the endpoint-verifier, the transport's wire frames, the cluster
// messages of the scheduler backend, the resource-manager protocol and the
// benchmark messages.
//
// The Go files named *.pb.go are generated from the .proto files beside
// them and are committed. After editing a .proto file, regenerate them with
//
//	go generate ./messages
//
// which needs protoc 3.21 on PATH (Debian's protobuf-compiler package); the
// protoc-gen-go plugin is built from the version pinned in go.mod. CI
// regenerates and fails if the committed code is stale.
//
// Messages are immutable once sent: a local send passes the pointer without
// copying it, so neither the sender nor the receiver may modify it after.
package messages

//go:generate sh ./generate.sh
