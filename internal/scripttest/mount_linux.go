package scripttest

import "syscall"

// mountTmpfs mounts a tmpfs of size (such as 64k) at dir.
func mountTmpfs(dir, size string) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size)
}

// unmountDetach unmounts dir, lazily should it be busy.
func unmountDetach(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }
