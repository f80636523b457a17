package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// An endpoint's name is the user part of its address, spark://NAME@host:port:
// a name RegisterEndpoint takes must lead back to that endpoint, and no
// other, through the address its own Ref prints. Names that an address
// cannot carry as they are ("a?b", "a#b", "a[0]", a NUL, non-ASCII letters, and "a%41b", which
// an address decodes to "aAb") are refused with ErrInvalidName. Before, they
// registered, and their addresses failed to parse or reached another
// endpoint.
func TestRegisteredNameRoundTripsThroughItsURI(t *testing.T) {
	ctx := testutil.Context(t, waitFor)
	srv := newEnv(t, "srv", nil)
	cli := newClientEnv(t, "cli", nil)
	register(t, srv, "aAb", newEcho())
	for _, name := range []string{"a?b", "a#b", "a%41b", "a[0]", "a\x00b", "Ünïcode"} {
		ref, err := srv.RegisterEndpoint(name, newEcho())
		if err != nil {
			if !errors.Is(err, actor.ErrInvalidName) {
				t.Errorf("name %q refused with %v, want ErrInvalidName", name, err)
			}
			continue
		}
		got, err := cli.SetupEndpointRefByURI(ctx, ref.String())
		if err != nil {
			t.Errorf("name %q registered, but its URI %q does not resolve: %v", name, ref.String(), err)
			continue
		}
		if got.Name() != name {
			t.Errorf("name %q registered, but its URI %q resolves to endpoint %q", name, ref.String(), got.Name())
		}
	}
	for _, name := range []string{"CoarseGrainedScheduler", "block-manager_1.x", "a+b=c~d!"} {
		ref := register(t, srv, name, newEcho())
		if got, err := cli.SetupEndpointRefByURI(ctx, ref.String()); err != nil || got.Name() != name {
			t.Errorf("name %q: its URI %q resolves to %v, %v", name, ref.String(), got, err)
		}
	}
}
