package bundle

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"
)

// Writer writes a bundle: Add each image, then Close to write the manifest.
type Writer struct {
	tw *tar.Writer
	m  Manifest
}

// NewWriter starts a bundle on w for the lab build named labVersion.
func NewWriter(w io.Writer, labVersion string) *Writer {
	return &Writer{tw: tar.NewWriter(w), m: Manifest{Format: Format, Lab: labVersion, Created: time.Now().UTC()}}
}

// Add streams one image from d into the bundle, file by file, hashing each file as it passes.
func (w *Writer) Add(ctx context.Context, d Docker, ref string) (err error) {
	id := d.ImageID(ctx, ref)
	if id == "" {
		return fmt.Errorf("image %s is not in the local Docker: pull or load it first", ref)
	}
	img := Image{Ref: ref, ID: id, Dir: fmt.Sprintf("%s/%d", imagesDir, len(w.m.Images))}
	save, err := d.Save(ctx, ref)
	if err != nil {
		return err
	}
	defer func() {
		if closeErr := save.Close(); err == nil {
			err = closeErr
		}
	}()
	tr := tar.NewReader(save)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read docker save of %s: %w", ref, err)
		}
		f, err := w.copyEntry(img.Dir, h, tr)
		if err != nil {
			return fmt.Errorf("bundle %s: %w", ref, err)
		}
		if f != nil {
			img.Files = append(img.Files, *f)
		}
	}
	w.m.Images = append(w.m.Images, img)
	return nil
}

// copyEntry writes one entry of an image's archive under dir; a regular file comes back with its checksum.
func (w *Writer) copyEntry(dir string, h *tar.Header, r io.Reader) (*File, error) {
	if !fs.ValidPath(path.Clean(h.Name)) {
		return nil, fmt.Errorf("docker save wrote an unexpected path %q", h.Name)
	}
	// Names are prefixed, not joined, so a directory keeps the trailing slash docker gave it.
	h.Name = dir + "/" + h.Name
	if h.Typeflag == tar.TypeLink {
		h.Linkname = dir + "/" + h.Linkname
	}
	// The longer name may not fit the format docker chose; let the writer pick one that does.
	h.Format = tar.FormatUnknown
	if err := w.tw.WriteHeader(h); err != nil {
		return nil, fmt.Errorf("write %s: %w", h.Name, err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, nil
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(w.tw, sum), r)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", h.Name, err)
	}
	return &File{Name: h.Name, Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// Close writes the manifest and its checksum and ends the archive; it returns the manifest written.
func (w *Writer) Close() (*Manifest, error) {
	raw, err := json.MarshalIndent(w.m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode bundle manifest: %w", err)
	}
	sum := sha256.Sum256(raw)
	for _, e := range []struct {
		name string
		data []byte
	}{{ManifestName, raw}, {ManifestSumName, []byte(hex.EncodeToString(sum[:]) + "\n")}} {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: w.m.Created, Typeflag: tar.TypeReg}
		if err := w.tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write %s: %w", e.name, err)
		}
		if _, err := w.tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("write %s: %w", e.name, err)
		}
	}
	if err := w.tw.Close(); err != nil {
		return nil, fmt.Errorf("finish bundle: %w", err)
	}
	return &w.m, nil
}
