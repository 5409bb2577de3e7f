//go:build !linux && !darwin

package hostenv

// freeBytes is unknown here: on Windows the engine's data root is inside Docker Desktop's VM.
func freeBytes(string) int64 { return -1 }
