package launcher

import (
	"bytes"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// execCmd runs the program's command line args in this process and
// returns what it printed and its error.
func execCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := Command(WithOutput(&out, &out))
	root.SetArgs(args)
	_, err := root.ExecuteC()
	return out.String(), err
}
