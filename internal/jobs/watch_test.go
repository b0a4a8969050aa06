package jobs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// --watch notices, within a second or so, a file written, replaced by a
// rename, removed, a *.tab file added to a directory, and a ConfigMap's
// swap of the directory a symlink names; it says nothing when nothing
// changed, nor for a file of a directory that is not *.tab.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A ConfigMap: the file is data/jobs.tab -> ..data/jobs.tab, ..data ->
	// ..v1; an update writes ..v2 and swaps ..data by a rename.
	for _, d := range []string{"..v1", "..v2", "conf.d"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("..v1/jobs.tab", "@hourly true\n")
	write("..v2/jobs.tab", "@daily true\n")
	write("conf.d/a.tab", "@hourly a\n")
	write("single.tab", "@hourly s\n")
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/jobs.tab", filepath.Join(dir, "cm.tab")); err != nil {
		t.Fatal(err)
	}
	paths := []string{filepath.Join(dir, "cm.tab"), filepath.Join(dir, "conf.d"), filepath.Join(dir, "single.tab")}
	changed := make(chan struct{}, 1)
	stop := make(chan struct{})
	defer close(stop)
	go watch(paths, look(paths), changed, stop)

	quiet := func(what string) {
		t.Helper()
		select {
		case <-changed:
			t.Fatalf("a change seen after %s", what)
		case <-time.After(3 * watchEvery):
		}
	}
	noticed := func(what string, change func()) {
		t.Helper()
		change()
		if _, ok := testutil.Receive((<-chan struct{})(changed)); !ok {
			t.Fatalf("%s not noticed within %v", what, testutil.WaitBound)
		}
	}
	// Each change is one step as the watcher sees it (a look between the
	// create, or the truncation, and the write would see two changes).
	quiet("nothing")
	noticed("a file written", func() {
		f, err := os.OpenFile(filepath.Join(dir, "single.tab"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("@hourly s2 longer\n"); err != nil { // one write, over all of it
			t.Fatal(err)
		}
	})
	noticed("a *.tab file added", func() {
		write("conf.d/.b.tmp", "@hourly b\n")
		if err := os.Rename(filepath.Join(dir, "conf.d/.b.tmp"), filepath.Join(dir, "conf.d/b.tab")); err != nil {
			t.Fatal(err)
		}
	})
	write("conf.d/README", "not a jobs file\n")
	quiet("a file of the directory that is not *.tab")
	noticed("a file replaced by a rename", func() {
		write("conf.d/.a.tmp", "@daily a\n")
		if err := os.Rename(filepath.Join(dir, "conf.d/.a.tmp"), filepath.Join(dir, "conf.d/a.tab")); err != nil {
			t.Fatal(err)
		}
	})
	noticed("a ConfigMap's swap", func() {
		if err := os.Symlink("..v2", filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	})
	noticed("a file removed", func() {
		if err := os.Remove(filepath.Join(dir, "single.tab")); err != nil {
			t.Fatal(err)
		}
	})
}
