package lock

import (
	"os"
	"reflect"
	"sync"
	"unsafe"

	"github.com/gofrs/flock"
)

// Inherited returns the open file whose lock a lease holds, for the run's
// command to inherit, as flock(1)'s command inherits its lock: the lock then
// stays held for as long as any process of the run keeps the file open,
// should every die in mid-run (the kernel frees a flock(2) lock only once
// every descriptor of its open file is closed). every's own Unlock still
// frees it at the run's end, whoever else holds the file (LOCK_UN acts on
// the open file, not on one descriptor). It is nil for a lease that holds no
// file: no lock, a fleet store's.
func Inherited(l Lease) *os.File {
	if fl, ok := l.(fileLease); ok {
		return flockFile(fl.fl)
	}
	return nil
}

// flockFile is the *os.File a gofrs/flock Flock holds while locked. The
// library keeps it in an unexported field and has no accessor; the field is
// read by its name and type, found once, and a version that renames or
// retypes it gives nil (the command then runs without the lock's file, as
// before; TestInheritedIsTheLockedFile fails on such an upgrade).
func flockFile(fl *flock.Flock) *os.File {
	off, ok := fhOffset()
	if !ok {
		return nil
	}
	return *(**os.File)(unsafe.Add(unsafe.Pointer(fl), off))
}

// fhOffset is the offset of Flock's *os.File field, if it still has one.
var fhOffset = sync.OnceValues(func() (uintptr, bool) {
	f, ok := reflect.TypeFor[flock.Flock]().FieldByName("fh")
	if !ok || f.Type != reflect.TypeFor[*os.File]() {
		return 0, false
	}
	return f.Offset, true
})
