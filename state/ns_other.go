//go:build !linux

package state

// pidNamespace: no PID namespaces to name here. A jail or a zone may still
// share a directory with processes whose pids mean nothing here: the
// writers of temporary files are then all taken as of another namespace.
func pidNamespace() (string, bool) { return "", false }
