package cli

import (
	"testing"

	"github.com/everycli/every/internal/scripttest"
)

// TestMain runs the tests from the repository's root, where the docs tests
// read README.md, docs/ and completions/ by those paths, with every and the
// scripts' job on PATH for the tests that run them as a user does.
func TestMain(m *testing.M) { scripttest.MainIn(m, "../..") }
