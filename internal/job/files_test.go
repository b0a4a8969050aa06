package job

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// A directory every cannot write in is told with the fix that fits: a
// read-only filesystem is not a matter of permissions.
func TestDirFix(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "create", Path: "/ro/x", Err: syscall.EROFS}, "read-only: remount it"},
		{fmt.Errorf("wrapped: %w", &fs.PathError{Op: "create", Path: "/x", Err: syscall.ENOSPC}), "full: free some space"},
		{&fs.PathError{Op: "create", Path: "/x", Err: syscall.EACCES}, "fix the directory's permissions"},
	} {
		if got := dirFix(tt.err); !strings.Contains(got, tt.want) {
			t.Errorf("dirFix(%v) = %q, want it to say %q", tt.err, got, tt.want)
		}
	}
}
