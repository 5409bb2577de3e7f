package scenarios

import (
	"io/fs"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary scenario files to the strict loader: it must return a scenario or errors with
// positions, never panic or hang.
func FuzzParse(f *testing.F) {
	entries, err := fs.ReadDir(catalogFS, "catalog")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(catalogFS, "catalog/"+e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("id: x\n"))
	f.Add([]byte("faults: [{taint: {}}, {}]\nvars: {a: }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err == nil {
			if s == nil {
				t.Fatal("nil scenario without error")
			}
			return
		}
		if es, ok := err.(Errors); ok {
			for _, e := range es {
				if !strings.HasPrefix(e.Error(), "fuzz.yaml") {
					t.Fatalf("error without file position: %q", e.Error())
				}
			}
		}
	})
}
