package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// maxManifestBytes bounds what is read into memory from an archive: the manifest, never an image.
const maxManifestBytes = 16 << 20

// CorruptError names the file of a bundle whose content is not what its manifest says.
type CorruptError struct {
	File   string
	Reason string
}

func (e *CorruptError) Error() string { return e.File + ": " + e.Reason }

// VerifyFile checks every checksum of the bundle at path.
func VerifyFile(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open bundle: %w", err)
	}
	defer func() { _ = f.Close() }()
	return Verify(f)
}

// Verify reads a whole bundle, hashing every file as it streams past, and checks the manifest's own checksum,
// then every file against the manifest: none missing, none extra, none changed.
func Verify(r io.Reader) (*Manifest, error) {
	tr := tar.NewReader(r)
	seen := map[string]File{}
	var raw, sum []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not a readable bundle (truncated or not a lab bundle): %w", err)
		}
		switch {
		case h.Name == ManifestName:
			raw, err = readSmall(tr, h)
		case h.Name == ManifestSumName:
			sum, err = readSmall(tr, h)
		case strings.HasPrefix(h.Name, toolsDir+"/"):
			// A load writes each tool's content under its name; a link or directory there is none of lab's.
			if h.Typeflag != tar.TypeReg {
				return nil, &CorruptError{File: h.Name, Reason: "is not a regular file"}
			}
			seen[h.Name], err = hashEntry(h.Name, tr)
		case !strings.HasPrefix(h.Name, imagesDir+"/"):
			return nil, &CorruptError{File: h.Name, Reason: "is not part of a lab bundle"}
		case h.Typeflag == tar.TypeReg:
			var f File
			f, err = hashEntry(h.Name, tr)
			seen[h.Name] = f
		}
		if err != nil {
			return nil, err
		}
	}
	m, err := readManifest(raw, sum)
	if err != nil {
		return nil, err
	}
	for _, want := range m.files() {
		got, ok := seen[want.Name]
		if !ok {
			return nil, &CorruptError{File: want.Name, Reason: "is missing"}
		}
		if err := mismatch(got, want); err != nil {
			return nil, err
		}
		delete(seen, want.Name)
	}
	if extra := slices.Sorted(maps.Keys(seen)); len(extra) > 0 {
		return nil, &CorruptError{File: extra[0], Reason: "is not in the manifest"}
	}
	return m, nil
}

// mismatch says how the file read (got) differs from what the manifest says (want), if it does.
func mismatch(got, want File) error {
	if got.Size == want.Size && got.SHA256 == want.SHA256 {
		return nil
	}
	return &CorruptError{File: want.Name, Reason: fmt.Sprintf("checksum mismatch (sha256 %s, manifest says %s)", short(got.SHA256), short(want.SHA256))}
}

// readManifest checks the manifest against its checksum and decodes it.
func readManifest(raw, sum []byte) (*Manifest, error) {
	switch {
	case raw == nil:
		return nil, &CorruptError{File: ManifestName, Reason: "is missing (truncated, or not a lab bundle)"}
	case sum == nil:
		return nil, &CorruptError{File: ManifestSumName, Reason: "is missing (truncated, or not a lab bundle)"}
	}
	got := sha256.Sum256(raw)
	if hex.EncodeToString(got[:]) != strings.TrimSpace(string(sum)) {
		return nil, &CorruptError{File: ManifestName, Reason: "checksum mismatch"}
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &CorruptError{File: ManifestName, Reason: err.Error()}
	}
	if m.Format != Format {
		return nil, fmt.Errorf("bundle format %d is not the format %d this lab reads: use the lab that wrote it (%s)", m.Format, Format, m.Lab)
	}
	// A tool's name becomes a file name on load, and its file must be the one checked under that name.
	for _, t := range m.Tools {
		if file, err := toolFile(t.Name); err != nil || file != t.File.Name {
			return nil, &CorruptError{File: ManifestName, Reason: fmt.Sprintf("tool %q is stored as %q", t.Name, t.File.Name)}
		}
	}
	return &m, nil
}

func readSmall(r io.Reader, h *tar.Header) ([]byte, error) {
	if h.Size > maxManifestBytes {
		return nil, &CorruptError{File: h.Name, Reason: fmt.Sprintf("is %d bytes, larger than a manifest can be", h.Size)}
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return nil, fmt.Errorf("read %s: %w", h.Name, err)
	}
	return b.Bytes(), nil
}

func hashEntry(name string, r io.Reader) (File, error) {
	f, err := hashCopy(name, io.Discard, r)
	if err != nil {
		return File{}, fmt.Errorf("read %s (truncated bundle?): %w", name, err)
	}
	return f, nil
}

// hashCopy copies r to w and describes what it copied as the manifest lists the file name.
func hashCopy(name string, w io.Writer, r io.Reader) (File, error) {
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, sum), r)
	return File{Name: name, Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}, err
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
