package state

import (
	"os"
	"strconv"
	"strings"
)

// pidNamespace names this process's PID namespace on this kernel's boot: the
// namespace's inode (/proc/self/ns/pid, "pid:[4026531836]") and the boot's
// id. An inode alone names a namespace only within one kernel: the initial
// namespace is 4026531836 on every Linux host, and hosts sharing a state
// directory over NFS must not take each other's writers for their own.
func pidNamespace() (string, bool) {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]"), 10, 64)
	if err != nil {
		return "", false
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", false
	}
	return nsToken(n, string(boot))
}
