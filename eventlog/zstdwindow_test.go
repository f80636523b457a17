package eventlog_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
)

// A compressed log that declares a huge window is not given one. Before,
// this 10-byte file made a replay allocate 1025 MiB and a listing of its
// folder 513 MiB: the decoder took the window its frame header named.
func TestACompressedLogsWindowIsBounded(t *testing.T) {
	dir := t.TempDir()
	// zstd's magic, a frame header whose window descriptor says 2^29
	// bytes, and one last RLE block of one '\n'.
	block := uint32(1) | 1<<1 | 1<<3
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 19 << 3, byte(block), byte(block >> 8), byte(block >> 16), '\n'}
	p := filepath.Join(dir, "app-window.zstd")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	allocated := func(fn func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	if n := allocated(func() { _, _ = eventlog.Replay(p, endpoints.ListenerFunc(func(endpoints.Event) {})) }); n > 64<<20 {
		t.Errorf("replaying a %d-byte log allocated %d MiB", len(b), n>>20)
	}
	if n := allocated(func() {
		if _, err := eventlog.List(dir); err != nil {
			t.Error(err)
		}
	}); n > 64<<20 {
		t.Errorf("listing a folder of one %d-byte log allocated %d MiB", len(b), n>>20)
	}
}
