package regular

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Flags never follow a link at the path itself, never block on a FIFO or a
// device, never make a terminal ours, and never leak into a child process.
const Flags = unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// Open opens path with flags (and Flags) and perm, and refuses what is not a
// regular file without blocking or following a link: the error, an
// *fs.PathError, says what the path is instead (errors.Is ErrNotRegular).
// Other errors are open(2)'s, as *fs.PathError.
func Open(path string, flags int, perm uint32) (int, error) {
	fd, err := unix.Open(path, flags|Flags, perm)
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK):
		// O_NOFOLLOW met a link at the path (FreeBSD says EMLINK).
		return -1, &fs.PathError{Op: "open", Path: path, Err: Not("a symbolic link")}
	case errors.Is(err, unix.EISDIR):
		return -1, &fs.PathError{Op: "open", Path: path, Err: Not("a directory")}
	case errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENODEV):
		// What open(2) says of a socket, or of a device without a driver.
		return -1, &fs.PathError{Op: "open", Path: path, Err: Not("a socket or a device")}
	case err != nil:
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "open", Path: path, Err: Not(StatKind(uint32(st.Mode)))}
	}
	return fd, nil
}

// OpenExisting is Open after an Lstat: what is not a regular file at path
// (a device, a FIFO) is refused without being opened at all, as opening
// some devices does something; Open's flags and fstat close the race. A
// missing file is an *fs.PathError wrapping fs.ErrNotExist.
func OpenExisting(path string, flags int, perm uint32) (int, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return -1, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return -1, &fs.PathError{Op: "open", Path: path, Err: Not(StatKind(uint32(st.Mode)))}
	}
	return Open(path, flags, perm)
}

// StatKind names the file type of a stat mode that is not a regular file.
func StatKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "not a regular file"
}
