package lock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A FIFO or a device at the lock path is refused without being opened at
// all (opening some devices does something; a FIFO's writer would see a
// reader): inotify sees every open of the inode.
func TestFileNeverOpensWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{"FIFO": filepath.Join(dir, "fifo")}
	if err := unix.Mkfifo(paths["FIFO"], 0o600); err != nil {
		t.Fatal(err)
	}
	if dev := filepath.Join(dir, "null"); mknodNull(dev) == nil {
		paths["device"] = dev
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
			if err != nil {
				t.Skipf("no inotify: %v", err)
			}
			defer unix.Close(in)
			if _, err := unix.InotifyAddWatch(in, path, unix.IN_OPEN); err != nil {
				t.Fatal(err)
			}
			if err := Check(path); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Check = %v, want ErrNotRegular", err)
			}
			if _, err := (&File{Path: path}).Lock(context.Background(), 0); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Lock = %v, want ErrNotRegular", err)
			}
			buf := make([]byte, 4096)
			n, err := unix.Read(in, buf)
			if errors.Is(err, unix.EAGAIN) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n >= unix.SizeofInotifyEvent {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
				t.Errorf("the %s was opened (inotify mask %#x)", name, ev.Mask)
			}
		})
	}
}
