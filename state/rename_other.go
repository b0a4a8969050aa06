//go:build !linux && !darwin

package state

// renameNoReplace renames from to to, unless to exists (unix.EEXIST). No
// system call here renames without replacing: see renameChecked.
func renameNoReplace(from, to string) error { return renameChecked(from, to) }

// exchange is errNoExchange: no system call here swaps two files.
func exchange(string, string) error { return errNoExchange }
