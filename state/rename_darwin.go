package state

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, unless to exists (unix.EEXIST): one
// system call, renamex_np with RENAME_EXCL, where the filesystem has it.
func renameNoReplace(from, to string) error {
	err := unix.RenamexNp(from, to, unix.RENAME_EXCL)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return renameChecked(from, to)
	}
	return err
}

// exchange is errNoExchange: a replacing rename costs no flush of the new
// file on APFS, so there is nothing to gain from renamex_np's RENAME_SWAP.
func exchange(string, string) error { return errNoExchange }
