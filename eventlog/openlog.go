// Opening a log's file for reading: regular files only.

package eventlog

import (
	"fmt"
	"os"

	"github.com/sparkrpc/sparkrpc/internal/regularfile"
)

// ErrNotRegular is the error of a log's file that is not a regular file:
// a FIFO, a device, a folder. The folder of event logs is written by every
// application's driver, and a FIFO there would block its reader's open for
// ever, a device such as /dev/zero keep it reading for ever.
var ErrNotRegular = regularfile.ErrNotRegular

// openLog opens the log's file p for reading, without waiting for a FIFO's
// writer, and refuses it unless it is a regular file.
func openLog(p string) (*os.File, error) {
	f, err := regularfile.OpenNoFollow(p)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	return f, nil
}
