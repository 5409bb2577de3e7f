// Package bundle packs the images a lab classroom needs (the kind node image and every workload image the
// catalogue declares) into one tar archive with a manifest and checksums, and loads it into another machine's
// Docker, so `lab cluster create` and every scenario work in a room without a registry. Images are streamed
// from `docker save` into the archive and from the archive into `docker load`, never held in memory.
//
// Layout: images/<n>/... holds the files of image n exactly as `docker save` wrote them; manifest.json lists
// every image (reference, ID) and every file with its size and SHA-256; manifest.json.sha256 is the
// manifest's own checksum. Both come last, because the checksums are known only once the images are written.
package bundle

import (
	"fmt"
	"runtime/debug"
	"time"
)

// Format is the manifest format this lab writes and reads.
const Format = 1

// Names of the manifest entries.
const (
	ManifestName    = "manifest.json"
	ManifestSumName = ManifestName + ".sha256"
	imagesDir       = "images"
)

// Manifest describes a bundle.
type Manifest struct {
	Format  int       `json:"format"`
	Lab     string    `json:"lab"`
	Created time.Time `json:"created"`
	Images  []Image   `json:"images"`
}

// Image is one image of the bundle and the files `docker save` wrote for it.
type Image struct {
	Ref   string `json:"ref"`
	ID    string `json:"id"`
	Dir   string `json:"dir"`
	Files []File `json:"files"`
}

// File is one regular file of the archive.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Size is the bytes of image files in the bundle.
func (m *Manifest) Size() int64 {
	var n int64
	for _, img := range m.Images {
		for _, f := range img.Files {
			n += f.Size
		}
	}
	return n
}

// LabVersion names the lab build writing a bundle: its module version, or the VCS revision it was built from.
func LabVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev != "" {
		v = fmt.Sprintf("%s (%s%s)", v, rev, dirty)
	}
	return v
}
