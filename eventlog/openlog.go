// Opening a log's file for reading: regular files only.

package eventlog

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is the error of a log's file that is not a regular file:
// a FIFO, a device, a folder. The folder of event logs is written by every
// application's driver, and a FIFO there would block its reader's open for
// ever, a device such as /dev/zero keep it reading for ever.
var ErrNotRegular = errors.New("eventlog: not a regular file")

// openLog opens the log's file p for reading, without waiting (openFlags)
// for a FIFO's writer, and refuses it unless it is a regular file.
func openLog(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s (%s)", ErrNotRegular, p, st.Mode().Type())
	}
	return f, nil
}
