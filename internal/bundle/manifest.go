// Package bundle packs the images a lab classroom needs (the kind node image and every workload image the
// catalogue declares) and the programs some scenarios bring into the cluster into one tar archive with a
// manifest and checksums, and loads it into another machine's Docker and state directory, so `lab cluster
// create` and every scenario work in a room without a registry. Images are streamed from `docker save` into
// the archive and from the archive into `docker load`, never held in memory.
//
// Layout: images/<n>/... holds the files of image n exactly as `docker save` wrote them; tools/<name> holds
// one program, after the images because a load streams them from the start; manifest.json lists every image
// (reference, ID), every tool and every file with its size and SHA-256; manifest.json.sha256 is the
// manifest's own checksum. Both come last, because the checksums are known only once the rest is written.
package bundle

import (
	"fmt"
	"io/fs"
	"runtime/debug"
	"strings"
	"time"
)

// Format is the manifest format this lab writes and reads; 2 added tools.
const Format = 2

// Names of the manifest entries.
const (
	ManifestName    = "manifest.json"
	ManifestSumName = ManifestName + ".sha256"
	imagesDir       = "images"
	toolsDir        = "tools"
)

// Manifest describes a bundle.
type Manifest struct {
	Format  int       `json:"format"`
	Lab     string    `json:"lab"`
	Created time.Time `json:"created"`
	Images  []Image   `json:"images"`
	Tools   []Tool    `json:"tools"`
}

// Image is one image of the bundle and the files `docker save` wrote for it.
type Image struct {
	Ref   string `json:"ref"`
	ID    string `json:"id"`
	Dir   string `json:"dir"`
	Files []File `json:"files"`
}

// Tool is one program of the bundle, stored as tools/<Name>.
type Tool struct {
	Name string `json:"name"`
	File File   `json:"file"`
}

// toolFile is the archive path of the program name, which must be one path element: a load writes the program
// into a directory under that name.
func toolFile(name string) (string, error) {
	if !fs.ValidPath(name) || name == "." || strings.Contains(name, "/") {
		return "", fmt.Errorf("tool name %q is not a file name", name)
	}
	return toolsDir + "/" + name, nil
}

// File is one regular file of the archive.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Size is the bytes of files in the bundle, images' and tools'.
func (m *Manifest) Size() int64 {
	var n int64
	for _, f := range m.files() {
		n += f.Size
	}
	return n
}

// files is every file the manifest lists: the images', then the tools'.
func (m *Manifest) files() []File {
	var all []File
	for _, img := range m.Images {
		all = append(all, img.Files...)
	}
	for _, t := range m.Tools {
		all = append(all, t.File)
	}
	return all
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
