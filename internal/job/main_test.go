package job

import (
	"testing"

	"github.com/everycli/every/internal/scripttest"
)

// TestMain puts every and the scripts' job on PATH: TestActiveForeignMarkerRun
// and TestOutputTailMemory run them as a user does.
func TestMain(m *testing.M) { scripttest.Main(m) }
