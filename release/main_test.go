package release

import (
	"testing"

	"github.com/everycli/every/internal/scripttest"
)

// TestMain runs the tests from the repository's root, where they read
// install.sh, dist/ and the Dockerfile by those paths, with every on PATH.
func TestMain(m *testing.M) { scripttest.MainIn(m, "..") }
