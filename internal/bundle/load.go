package bundle

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
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
