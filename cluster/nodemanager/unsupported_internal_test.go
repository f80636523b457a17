package nodemanager

import (
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/endpointtest"
)

// A node manager's endpoint fails an ask of a type it does not handle with
// "Unsupported message".
func TestEndpointRejectsUnsupportedAsks(t *testing.T) {
	ref, err := endpointtest.Env(t).RegisterEndpoint(cluster.NodeManagerEndpointName, newNMEndpoint(&NodeManager{log: zerolog.Nop()}))
	if err != nil {
		t.Fatal(err)
	}
	endpointtest.RejectsUnsupportedAsk(t, ref)
}
