package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/cka-lab/lab/internal/docker"
)

// archive returns a `docker save` archive of refs, whose local image IDs are ids, and a func that releases it.
// Archives are kept in the user's cache directory under a key of names and IDs, so the next cluster's load skips
// the save (1.7 s for lab's workload images on an idle machine, more during a cold create, when the save
// competes with the starting nodes for the CPUs). Only the newest set is kept: the catalog's images, which
// every create loads. Without a writable cache directory the archive is a temporary file.
func archive(ctx context.Context, refs []string, ids map[string]string) (string, func(), error) {
	dir, err := os.UserCacheDir()
	if err == nil {
		dir = filepath.Join(dir, "lab", "images")
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		f, err := os.CreateTemp("", "lab-images-*.tar")
		if err != nil {
			return "", nil, err
		}
		release := func() { _ = os.Remove(f.Name()) }
		if err := save(ctx, f, refs); err != nil {
			release()
			return "", nil, err
		}
		return f.Name(), release, nil
	}
	h := sha256.New()
	for _, r := range refs {
		fmt.Fprintf(h, "%s=%s\n", r, ids[r])
	}
	path := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:16]+".tar")
	// Every process holds the cache's lock shared while it uses an archive, and prunes only when it can take
	// it alone: another lab process may be about to import the archive a prune would remove.
	lock := flock.New(filepath.Join(dir, ".lock"))
	for range 2 {
		if err := lock.RLock(); err != nil {
			return "", nil, fmt.Errorf("lock the image cache %s: %w", dir, err)
		}
		release := func() { _ = lock.Unlock() }
		if _, err := os.Stat(path); err == nil {
			return path, release, nil
		}
		f, err := os.CreateTemp(dir, "save-*.tmp")
		if err != nil {
			release()
			return "", nil, err
		}
		if err := save(ctx, f, refs); err != nil {
			_ = os.Remove(f.Name())
			release()
			return "", nil, err
		}
		// Rename is atomic: a concurrent create reads a whole archive or saves its own.
		if err := os.Rename(f.Name(), path); err != nil {
			_ = os.Remove(f.Name())
			release()
			return "", nil, err
		}
		release()
		prune(dir, path)
		// Between the two locks another process's prune may have removed this archive: then save it again.
	}
	return "", nil, fmt.Errorf("the image archive %s kept being pruned by other lab processes", path)
}

// save writes `docker save refs` to f and closes it.
func save(ctx context.Context, f *os.File, refs []string) error {
	defer func() { _ = f.Close() }()
	if err := (docker.Call{Timeout: docker.Transfer, Stdout: f}).Run(ctx, append([]string{"save"}, refs...)...); err != nil {
		return err
	}
	return f.Close()
}

// prune removes every archive but keep, and partial saves an interrupted run left behind (an hour old: a
// concurrent save takes seconds), when no other lab process is using the cache.
func prune(dir, keep string) {
	lock := flock.New(filepath.Join(dir, ".lock"))
	if ok, err := lock.TryLock(); err != nil || !ok {
		return
	}
	defer func() { _ = lock.Unlock() }()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case p == keep:
		case strings.HasSuffix(e.Name(), ".tar"):
			_ = os.Remove(p)
		case strings.HasSuffix(e.Name(), ".tmp"):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				_ = os.Remove(p)
			}
		}
	}
}
