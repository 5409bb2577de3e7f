//go:build linux || darwin

package hostenv

import "syscall"

// freeBytes is what an unprivileged writer may still use on dir's filesystem; -1 when statfs fails.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	// Bsize is int64 on Linux and uint32 on macOS.
	return int64(st.Bavail) * int64(st.Bsize)
}
