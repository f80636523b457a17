#!/bin/sh
# Regenerates the Go code of every .proto file in this folder with protoc,
# the protoc-gen-go of the google.golang.org/protobuf version in go.mod, and
# the protoc-gen-go-vtproto of the github.com/planetscale/vtprotobuf version
# in go.mod (reflection-free marshal, unmarshal, size and clone methods,
# which the netty transport uses when a message has them).
# Run it through `go generate ./messages` (protoc 3.21 must be on PATH).
set -eu
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$bin/protoc-gen-go-vtproto" github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto
protoc --plugin=protoc-gen-go="$bin/protoc-gen-go" --plugin=protoc-gen-go-vtproto="$bin/protoc-gen-go-vtproto" -I . \
  --go_out=. --go_opt=paths=source_relative \
  --go-vtproto_out=. --go-vtproto_opt=paths=source_relative,features=marshal+unmarshal+unmarshal_unsafe+size+clone \
  ./*.proto
