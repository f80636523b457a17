package resourcemanager

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/cluster/internal/endpointtest"
)

// The resource manager's endpoint fails an ask of a type it does not
// handle with "Unsupported message" (RmTick, its own, is one-way).
func TestEndpointRejectsUnsupportedAsks(t *testing.T) {
	log := zerolog.Nop()
	rm, err := Start(endpointtest.Env(t), Config{StagingDir: t.TempDir(), Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Shutdown(context.Background())
	endpointtest.RejectsUnsupportedAsk(t, rm.ref)
}
