package state

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, unless to exists (unix.EEXIST): one
// system call, renameat2 with RENAME_NOREPLACE, where the filesystem has it.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A filesystem (NFS before 4.2, say) or a kernel without the flag.
		return renameChecked(from, to)
	}
	return err
}

// exchange swaps the files at from and at to, which must both exist: one
// system call, renameat2 with RENAME_EXCHANGE. It is errNoExchange where the
// kernel or the filesystem does not have it (before Linux 3.15; NFS, some
// FUSE filesystems).
func exchange(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	return err
}
