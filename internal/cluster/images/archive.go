package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
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
	if _, err := os.Stat(path); err == nil {
		return path, func() {}, nil
	}
	f, err := os.CreateTemp(dir, "save-*.tmp")
	if err != nil {
		return "", nil, err
	}
	if err := save(ctx, f, refs); err != nil {
		_ = os.Remove(f.Name())
		return "", nil, err
	}
	// Rename is atomic: a concurrent create reads a whole archive or saves its own.
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return "", nil, err
	}
	prune(dir, path)
	return path, func() {}, nil
}

// save writes `docker save refs` to f and closes it.
func save(ctx context.Context, f *os.File, refs []string) error {
	defer f.Close()
	cmd := exec.CommandContext(ctx, "docker", append([]string{"save"}, refs...)...)
	cmd.Stdout = f
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker save %s: %s: %w", strings.Join(refs, " "), firstLine(stderr.String()), err)
	}
	return f.Close()
}

// prune removes every archive but keep, and partial saves an interrupted run left behind (an hour old: a
// concurrent save takes seconds). A load reading a removed archive keeps its open file.
func prune(dir, keep string) {
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
