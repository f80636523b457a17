// The names the cluster's processes find each other and their files by.

package cluster

import (
	"strings"

	"github.com/sparkrpc/sparkrpc/messages"
)

// ExecutorConfFile is the name of an executor's conf file in its
// container's working folder (its --properties-file).
const ExecutorConfFile = "__executor_conf__.properties"

// AMEndpointName is the name of the application master's endpoint, which
// the driver asks for executors and for the reasons executors were lost.
const AMEndpointName = "YarnAM"

// NodeManagerEndpointName is the name of a node manager's endpoint.
const NodeManagerEndpointName = "NodeManager"

// ContainerSecretFile is the file a container reads its application's
// secret from (spark.authenticate.secret.file in its conf): the read end of
// a pipe the node manager hands it as file descriptor 3, so that the secret
// is in no file, argument or environment variable. submit hands a secret
// from its environment on to the program it runs the same way.
const ContainerSecretFile = "/proc/self/fd/3"

// ResourceManagerEndpointName is the name of the resource manager's endpoint.
const ResourceManagerEndpointName = "ResourceManager"

// StagingConfFile is the name of the application's configuration file in
// its staging folder and in the AM container's working folder.
const StagingConfFile = "__spark_conf__.properties"

// MaxLogChunk bounds the bytes of one NmReadContainerLog answer, well
// below the smallest sensible spark.rpc.message.maxSize.
const MaxLogChunk = 256 << 10

// EnvContainerAppID is the environment variable a node manager sets in
// every container it starts: the application's id. Submit refuses to run
// where it is set (ErrInContainer).
const EnvContainerAppID = "SPARKRPC_APP_ID"

// EnvPodAppID is the environment variable of the driver and executor pods
// on Kubernetes: the application's id (Spark's SPARK_APPLICATION_ID).
// Submit refuses to run where it is set, as where EnvContainerAppID is.
const EnvPodAppID = "SPARK_APPLICATION_ID"

// AppResourceName is the name of the primary resource (the user's program,
// of kind PROGRAM) in the staging folder and in a container's working
// folder: Spark's __app__.jar.
const AppResourceName = "__app__"

// MaxStageChunk bounds the bytes of one chunk of a staged resource, both
// ways: the resource manager refuses a larger RmStageChunk and never
// answers a larger RmResourceChunk. Senders use StageChunkSize.
const MaxStageChunk = 1 << 20

// StageChunkSize returns the size of the chunks an env whose
// spark.rpc.message.maxSize is maxMessageSize bytes stages and localizes
// resources in: 256 KiB (a quarter of MaxStageChunk: with a few chunks in
// flight, each held by sender, transport and receiver at once, the memory
// a transfer takes stays a few MiB), less when the frame limit needs room
// for the message around the data.
func StageChunkSize(maxMessageSize int) int {
	return max(4<<10, min(MaxStageChunk/4, maxMessageSize-64<<10))
}

// ValidateResourceName returns nil when name may name a resource of kind
// in a staging folder and a container's working folder: the program is
// AppResourceName; a file's name is one path element that is none of the
// names the cluster writes there itself (the program's, StagingConfFile,
// ExecutorConfFile). Any other name is an error matching ErrInvalidID.
func ValidateResourceName(kind messages.RmResourceKind, name string) error {
	switch kind {
	case messages.RmResourceKind_RM_RESOURCE_KIND_PROGRAM:
		if name != AppResourceName {
			return &InvalidIDError{Kind: "program resource", ID: name, Want: AppResourceName}
		}
		return nil
	case messages.RmResourceKind_RM_RESOURCE_KIND_FILE:
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || len(name) > 255 ||
			name == AppResourceName || name == StagingConfFile || name == ExecutorConfFile {
			return &InvalidIDError{Kind: "file resource", ID: name,
				Want: "a file's base name other than " + AppResourceName + ", " + StagingConfFile + " and " + ExecutorConfFile}
		}
		return nil
	}
	return &InvalidIDError{Kind: "resource kind", ID: kind.String(), Want: "PROGRAM or FILE"}
}

// ResourceKindName returns the short name of a resource kind: "PROGRAM",
// "FILE", or the enum's name for another value.
func ResourceKindName(kind messages.RmResourceKind) string {
	return strings.TrimPrefix(kind.String(), "RM_RESOURCE_KIND_")
}
