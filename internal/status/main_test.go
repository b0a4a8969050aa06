package status

import (
	"testing"

	"github.com/everycli/every/internal/scripttest"
)

// TestMain puts every on PATH: TestStatusOutputErrors runs it as a user does.
func TestMain(m *testing.M) { scripttest.Main(m) }
