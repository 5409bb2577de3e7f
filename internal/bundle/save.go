package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SaveFile writes a bundle to path, with what fill adds to it (images first, then tools), and returns its
// manifest and size. It writes next to path first and renames into place, so an interrupted save never leaves
// a file that looks like a bundle.
func SaveFile(path string, fill func(*Writer) error) (m *Manifest, size int64, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return nil, 0, fmt.Errorf("write bundle: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	buf := bufio.NewWriterSize(tmp, 1<<20)
	w := NewWriter(buf, LabVersion())
	if err := fill(w); err != nil {
		return nil, 0, err
	}
	if m, err = w.Close(); err != nil {
		return nil, 0, err
	}
	if err := errors.Join(buf.Flush(), tmp.Sync(), tmp.Chmod(0o644)); err != nil {
		return nil, 0, fmt.Errorf("write bundle %s: %w", path, err)
	}
	info, err := tmp.Stat()
	if err != nil {
		return nil, 0, err
	}
	if err := tmp.Close(); err != nil {
		return nil, 0, fmt.Errorf("write bundle %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, 0, fmt.Errorf("write bundle %s: %w", path, err)
	}
	return m, info.Size(), nil
}
