//go:build !linux

package servertest

import "syscall"

// sysProcAttr is nothing here: no parent-death signal outside Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }
