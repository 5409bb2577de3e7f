package bundle

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// errLoadStopped ends the copy into a `docker load` that exited before reading everything.
var errLoadStopped = errors.New("docker load stopped reading")

// Load streams each image of a verified bundle into d, one `docker load` per image, and returns the ID each
// reference has afterwards. each wraps every image's load (a progress line); verify the bundle first
// (VerifyFile), since what was loaded is not taken back.
func Load(ctx context.Context, bundlePath string, m *Manifest, d Docker, each func(Image, func() error) error) (map[string]string, error) {
	f, err := os.Open(bundlePath)
	if err != nil {
		return nil, fmt.Errorf("open bundle: %w", err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	next, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	ids := map[string]string{}
	for _, img := range m.Images {
		err := each(img, func() error {
			var loadErr error
			if next, loadErr = loadImage(ctx, tr, next, img, d); loadErr != nil {
				return loadErr
			}
			if ids[img.Ref] = d.ImageID(ctx, img.Ref); ids[img.Ref] == "" {
				return fmt.Errorf("docker load did not restore %s", img.Ref)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// loadImage copies the entries under img.Dir, starting at h, into `docker load` as an archive of their own,
// and returns the first header after them (or the error that ended the archive).
func loadImage(ctx context.Context, tr *tar.Reader, h *tar.Header, img Image, d Docker) (*tar.Header, error) {
	pr, pw := io.Pipe()
	loaded := make(chan error, 1)
	go func() {
		err := d.Load(ctx, pr)
		pr.CloseWithError(errLoadStopped)
		loaded <- err
	}()
	next, copyErr := copyImage(tr, h, img.Dir, pw)
	pw.CloseWithError(copyErr)
	if err := <-loaded; err != nil {
		return nil, fmt.Errorf("load %s: %w", img.Ref, err)
	}
	if copyErr != nil {
		return nil, fmt.Errorf("load %s: %w", img.Ref, copyErr)
	}
	return next, nil
}

// copyImage writes the run of entries under dir to w as one archive with dir stripped from their names.
func copyImage(tr *tar.Reader, h *tar.Header, dir string, w io.Writer) (*tar.Header, error) {
	tw := tar.NewWriter(w)
	prefix := dir + "/"
	var err error
	for ; err == nil && h != nil && strings.HasPrefix(h.Name, prefix); h, err = tr.Next() {
		h.Name = strings.TrimPrefix(h.Name, prefix)
		if h.Typeflag == tar.TypeLink {
			h.Linkname = strings.TrimPrefix(h.Linkname, prefix)
		}
		h.Format = tar.FormatUnknown
		if werr := tw.WriteHeader(h); werr != nil {
			return nil, fmt.Errorf("write %s: %w", path.Join(dir, h.Name), werr)
		}
		if _, werr := io.Copy(tw, tr); werr != nil {
			return nil, fmt.Errorf("copy %s: %w", path.Join(dir, h.Name), werr)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return h, nil
}

// ExtractTools writes each program of a verified bundle to dir/<name>, executable, and returns their paths in
// the manifest's order. Each is written beside its final name and renamed into place, so a program found there
// is always whole, and checked again on the way: unlike an image, nothing checks it after the load.
func ExtractTools(bundlePath string, m *Manifest, dir string) ([]string, error) {
	if len(m.Tools) == 0 {
		return nil, nil
	}
	want := map[string]Tool{}
	for _, t := range m.Tools {
		want[t.File.Name] = t
	}
	// 0700 like the state directory it is in, which this may create.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("extract tools: %w", err)
	}
	f, err := os.Open(bundlePath)
	if err != nil {
		return nil, fmt.Errorf("open bundle: %w", err)
	}
	defer func() { _ = f.Close() }()
	// The images before the tools are skipped by seeking, not read.
	tr := tar.NewReader(f)
	paths := map[string]string{}
	for len(paths) < len(want) {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read bundle: %w", err)
		}
		if t, ok := want[h.Name]; ok && h.Typeflag == tar.TypeReg && paths[t.Name] == "" {
			if paths[t.Name], err = extractTool(tr, t, dir); err != nil {
				return nil, err
			}
		}
	}
	out := make([]string, 0, len(m.Tools))
	for _, t := range m.Tools {
		if paths[t.Name] == "" {
			return nil, &CorruptError{File: t.File.Name, Reason: "is missing"}
		}
		out = append(out, paths[t.Name])
	}
	return out, nil
}

// extractTool writes the tool t from r to dir/<t.Name>, through a temporary file renamed into place once its
// checksum is the manifest's.
func extractTool(r io.Reader, t Tool, dir string) (_ string, err error) {
	tmp, err := os.CreateTemp(dir, "."+t.Name+".partial-*")
	if err != nil {
		return "", fmt.Errorf("extract %s: %w", t.Name, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	got, err := hashCopy(t.File.Name, tmp, r)
	if err != nil {
		return "", fmt.Errorf("extract %s: %w", t.Name, err)
	}
	if err := mismatch(got, t.File); err != nil {
		return "", err
	}
	if err := errors.Join(tmp.Sync(), tmp.Chmod(0o755), tmp.Close()); err != nil {
		return "", fmt.Errorf("extract %s: %w", t.Name, err)
	}
	path := filepath.Join(dir, t.Name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("extract %s: %w", t.Name, err)
	}
	return path, nil
}
