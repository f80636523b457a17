package history_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/eventlog"
	"github.com/sparkrpc/sparkrpc/history"
)

// zstdBomb returns a zstd frame (1 MiB window, within the reader's bound)
// of head, as a raw block, then blocks of 128 KiB of fill, as RLE blocks
// of 4 bytes each.
func zstdBomb(head []byte, blocks int, fill byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50}) // magic, no content size, window 1 MiB
	put := func(h uint32) { b.Write([]byte{byte(h), byte(h >> 8), byte(h >> 16)}) }
	put(uint32(len(head)) << 3) // raw block
	b.Write(head)
	for i := range blocks {
		last := uint32(0)
		if i == blocks-1 {
			last = 1
		}
		put(128<<10<<3 | 1<<1 | last) // RLE block
		b.WriteByte(fill)
	}
	return b.Bytes()
}

// A compressed log of 130 KB (a tenant's, finished) that decompresses to
// 4 GiB of empty lines is read no further than a thousand times its size:
// the server starts, lists the folder's applications, and the bomb's pages
// say why its log stops. Before, each reading decompressed all of it
// (16 s a reading, 3.5 minutes under the race detector), holding up the
// server's start and every later reading of the folder.
func TestDecompressionBombIsReadNoFurtherThanItsBound(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeLog(t, dir, "app-good", true, endpoints.ApplicationStart{Time: now, AppID: "app-good", AppName: "good"},
		endpoints.ApplicationEnd{Time: now})
	head := []byte("{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"x\"}\n" +
		"{\"Event\":\"SparkListenerApplicationStart\",\"App ID\":\"app-bomb\",\"App Name\":\"bomb\",\"Timestamp\":1700000000000}\n")
	if err := os.WriteFile(filepath.Join(dir, "app-bomb.zstd"), zstdBomb(head, 32<<10, '\n'), 0o640); err != nil {
		t.Fatal(err)
	}
	p, err := history.NewProvider(history.Config{Dir: dir, RetainedApplications: 2, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if apps := p.Applications(); len(apps) != 2 {
		t.Fatalf("Applications = %+v, want app-good and app-bomb", apps)
	}
	_, problems, err := p.Store("app-bomb")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(problems, func(s string) bool { return strings.Contains(s, eventlog.ErrExpands.Error()) }) {
		t.Fatalf("the bomb's problems %q do not say it was read no further (%v)", problems, eventlog.ErrExpands)
	}
}
