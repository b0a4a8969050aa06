package state

import (
	"os"
	"strconv"
	"strings"
)

// pidNamespace returns the inode that names this process's PID namespace,
// from /proc/self/ns/pid ("pid:[4026531836]").
func pidNamespace() (uint64, bool) {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]"), 10, 64)
	return n, err == nil
}
