package appmaster

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/internal/endpointtest"
)

// The application master's endpoint fails an ask of a type it does not
// handle with "Unsupported message".
func TestEndpointRejectsUnsupportedAsks(t *testing.T) {
	ref, err := endpointtest.Env(t).RegisterEndpoint(cluster.AMEndpointName, newAMEndpoint(context.Background(), zerolog.Nop(), nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	endpointtest.RejectsUnsupportedAsk(t, ref)
}
