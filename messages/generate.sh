#!/bin/sh
# Regenerates the Go code of every .proto file in this folder with protoc and
# the protoc-gen-go of the google.golang.org/protobuf version in go.mod.
# Run it through `go generate ./messages` (protoc 3.21 must be on PATH).
set -eu
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
protoc --plugin=protoc-gen-go="$bin/protoc-gen-go" -I . \
  --go_out=. --go_opt=paths=source_relative ./*.proto
