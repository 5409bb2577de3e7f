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
	"os"
	"path"
	"time"
)

// Writer writes a bundle: Add each image, AddTool each program, then Close to write the manifest.
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
	if len(w.m.Tools) > 0 {
		return fmt.Errorf("bundle %s: images go before tools, since a load streams them from the start", ref)
	}
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
	return w.writeEntry(h, r)
}

// AddTool streams the program at path into the bundle as tools/<name>, executable, hashing it as it passes.
func (w *Writer) AddTool(name, path string) error {
	file, err := toolFile(name)
	if err != nil {
		return err
	}
	src, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bundle tool %s: %w", name, err)
	}
	defer func() { _ = src.Close() }()
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("bundle tool %s: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("bundle tool %s: %s is not a regular file", name, path)
	}
	h := &tar.Header{Name: file, Mode: 0o755, Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}
	f, err := w.writeEntry(h, src)
	if err != nil {
		return fmt.Errorf("bundle tool %s (%s): %w", name, path, err)
	}
	w.m.Tools = append(w.m.Tools, Tool{Name: name, File: *f})
	return nil
}

// writeEntry writes h and, for a regular file, its content from r, which comes back with its checksum.
func (w *Writer) writeEntry(h *tar.Header, r io.Reader) (*File, error) {
	if err := w.tw.WriteHeader(h); err != nil {
		return nil, fmt.Errorf("write %s: %w", h.Name, err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, nil
	}
	f, err := hashCopy(h.Name, w.tw, r)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", h.Name, err)
	}
	return &f, nil
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
