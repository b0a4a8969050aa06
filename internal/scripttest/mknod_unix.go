//go:build unix

package scripttest

import "golang.org/x/sys/unix"

// mknodNull makes a character device like /dev/null (1:3) at path, where
// mknod is permitted (root). The type of mknod's device number differs
// between systems (uint64 on FreeBSD, int elsewhere): the generic call takes
// whichever unix.Mknod has, so the tests build for every target.
func mknodNull(path string) error {
	return mknod(unix.Mknod, path, unix.S_IFCHR|0o666, unix.Mkdev(1, 3))
}

func mknod[D int | uint64](f func(string, uint32, D) error, path string, mode uint32, dev uint64) error {
	return f(path, mode, D(dev))
}
