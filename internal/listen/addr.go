package listen

// This file owns --listen's address: its forms, checked before anything
// runs (a usage error), and the listener made of it at start-up, a unix
// socket's stale file removed only when it is a socket nobody answers on.

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Addr is where a Server listens: a TCP host and port, or a unix socket's
// path.
type Addr struct {
	Network string // "tcp" or "unix"
	Address string // host:port, or the socket's path
}

// String is the address as --listen takes it: host:port, or unix:PATH.
func (a Addr) String() string {
	if a.Network == "unix" {
		return "unix:" + a.Address
	}
	return a.Address
}

// maxSocketPath is the longest path of a unix socket: sun_path holds 108
// bytes on Linux with its NUL (104 on the BSDs and macOS, which refuse a
// longer one when every listens).
const maxSocketPath = 107

// ParseAddr reads --listen's value: localhost:9746, 127.0.0.1:9746,
// [::1]:9746, :9746 (every interface), or unix:/path/to/socket. A port is
// a number (0 lets the system choose one, which the start-up line tells).
// Its error is a reason and a hint, for a usage error's line.
func ParseAddr(s string) (Addr, error) {
	if path, ok := strings.CutPrefix(s, "unix:"); ok {
		switch {
		case path == "":
			return Addr{}, errors.New("no socket path; give one, as in unix:/run/every.sock")
		case strings.HasSuffix(path, "/"):
			return Addr{}, errors.New("the path names a directory; give the socket's own path, as in unix:" + path + "every.sock")
		case len(path) > maxSocketPath:
			return Addr{}, fmt.Errorf("a unix socket's path is at most %d bytes; choose a shorter one", maxSocketPath)
		case strings.ContainsRune(path, 0):
			return Addr{}, errors.New("a path holds no NUL byte")
		}
		return Addr{"unix", path}, nil
	}
	if strings.Contains(s, "://") {
		return Addr{}, errors.New("give an address to listen on, not a URL: host:port (localhost:9746, :9746) or unix:/path")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if _, nerr := strconv.Atoi(s); nerr == nil {
			return Addr{}, fmt.Errorf("a port alone is not an address; did you mean localhost:%s (this host only) or :%[1]s (every interface)?", s)
		}
		return Addr{}, errors.New("give host:port (localhost:9746, :9746, [::1]:9746) or unix:/path")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return Addr{}, fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if strings.ContainsAny(host, "/ ") {
		return Addr{}, fmt.Errorf("host %q is not a host name or address", host)
	}
	return Addr{"tcp", s}, nil
}

// ErrNotSocket is the error of a unix socket path that holds something
// other than a socket: a file, a directory, a link. It is never removed.
var ErrNotSocket = errors.New("not a socket")

// ErrSocketInUse is the error of a unix socket that a server answers on.
var ErrSocketInUse = errors.New("a server answers on it")

// staleProbe bounds the connection attempt that tells a live socket from
// a stale one.
const staleProbe = time.Second

// listen makes the listener of a. A unix socket's path may hold a stale
// socket, left by a server that died (a SIGKILL skips the removal at
// close): it is removed when it is a socket and nothing accepts a
// connection on it; anything else there is an error (ErrNotSocket,
// ErrSocketInUse), and stays.
func listen(a Addr) (net.Listener, error) {
	if a.Network == "unix" {
		if err := removeStale(a.Address); err != nil {
			return nil, err
		}
	}
	return net.Listen(a.Network, a.Address)
}

// removeStale removes the socket at path if nobody answers on it.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().Type() != fs.ModeSocket:
		return &fs.PathError{Op: "listen", Path: path, Err: ErrNotSocket}
	}
	c, err := net.DialTimeout("unix", path, staleProbe)
	switch {
	case err == nil:
		c.Close()
		return &fs.PathError{Op: "listen", Path: path, Err: ErrSocketInUse}
	case !errors.Is(err, syscall.ECONNREFUSED):
		// Not a sure sign of a dead server (a full backlog, no permission):
		// left alone, and listening there fails with its own error.
		return nil
	}
	// A stale socket: removed only if it is still the one probed (a server
	// that came up meanwhile keeps its own).
	if again, err := os.Lstat(path); err != nil || !os.SameFile(fi, again) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
