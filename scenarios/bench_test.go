package scenarios

import (
	"io/fs"
	"testing"
)

// BenchmarkParse is the loader's cost per scenario file: a command about one scenario parses its file, one
// that lists the catalogue every file.
func BenchmarkParse(b *testing.B) {
	data, err := fs.ReadFile(catalogFS, "catalog/cni-plugin-missing.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("scenarios/catalog/cni-plugin-missing.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstantiate is the cost of choosing a seed's values and substituting them.
func BenchmarkInstantiate(b *testing.B) {
	c, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	s, _ := c.Get("taint-dedicated-node")
	for b.Loop() {
		if _, err := s.Instantiate(7, fakeResolver{}); err != nil {
			b.Fatal(err)
		}
	}
}
