package images

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPruneKeepsTheNewestArchiveAndConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"keep.tar", "old.tar", "fresh-save.tmp", "stale-save.tmp", "other"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "stale-save.tmp"), old, old); err != nil {
		t.Fatal(err)
	}
	prune(dir, filepath.Join(dir, "keep.tar"))
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"fresh-save.tmp", "keep.tar", "other"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
