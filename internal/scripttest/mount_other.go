//go:build !linux

package scripttest

import (
	"errors"
	"fmt"
)

// mountTmpfs fails here: the [tmpfs] scripts are Linux's (mount(2) with
// tmpfs options), and the condition that guards them is false elsewhere.
func mountTmpfs(dir, size string) error {
	return fmt.Errorf("mount a tmpfs of %s at %s: %w", size, dir, errors.ErrUnsupported)
}

// unmountDetach has nothing to unmount: mountTmpfs never mounts here.
func unmountDetach(string) error { return nil }
