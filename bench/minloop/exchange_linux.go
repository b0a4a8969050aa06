package main

import "golang.org/x/sys/unix"

// exchange swaps the files at a and b, as every's state writes do.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// fdatasync syncs fd's data, and of its metadata what reading it needs.
func fdatasync(fd int) { _ = unix.Fdatasync(fd) }
