package images

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gofrs/flock"
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
		if e.Name() != ".lock" {
			left = append(left, e.Name())
		}
	}
	if want := []string{"fresh-save.tmp", "keep.tar", "other"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// A process about to import an archive holds the cache's lock shared: another process's prune leaves it.
func TestPruneSparesArchivesInUse(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"in-use.tar", "new.tar"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	user := flock.New(filepath.Join(dir, ".lock"))
	if err := user.RLock(); err != nil {
		t.Fatal(err)
	}
	prune(dir, filepath.Join(dir, "new.tar"))
	if _, err := os.Stat(filepath.Join(dir, "in-use.tar")); err != nil {
		t.Fatalf("an archive in use was pruned: %v", err)
	}
	if err := user.Unlock(); err != nil {
		t.Fatal(err)
	}
	prune(dir, filepath.Join(dir, "new.tar"))
	if _, err := os.Stat(filepath.Join(dir, "in-use.tar")); !os.IsNotExist(err) {
		t.Fatalf("an archive no longer in use was kept: %v", err)
	}
}
