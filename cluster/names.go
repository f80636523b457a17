// The names the cluster's processes find each other and their files by.

package cluster

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
// is in no file, argument or environment variable.
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
