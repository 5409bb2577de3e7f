package scenarios

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

// A command about one scenario parses that file only, and the scenario it gets is the one the whole
// catalogue lists afterwards.
func TestLazyCatalogParsesOneFile(t *testing.T) {
	good, err := fs.ReadFile(catalogFS, "catalog/taint-dedicated-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"catalog/taint-dedicated-node.yaml": {Data: good},
		"catalog/broken.yaml":               {Data: []byte("id: broken\nstage: nowhere\n")},
	}
	c, err := lazyFS(fsys, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("taint-dedicated-node"); err != nil {
		t.Fatalf("Get parsed more than its own file: %v", err)
	}
	if _, err := c.Get("broken"); err == nil {
		t.Fatal("Get of an invalid file succeeded")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("All of a catalogue with an invalid file did not fail")
		}
	}()
	c.All()
}

func TestLazyCatalogKeepsIdentity(t *testing.T) {
	c, err := lazyFS(catalogFS, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Get("kubelet-stopped")
	if err != nil {
		t.Fatal(err)
	}
	var listed *Scenario
	for _, s := range c.All() {
		if s.ID == "kubelet-stopped" {
			listed = s
		}
	}
	after, _ := c.Get("kubelet-stopped")
	if listed != before || after != before {
		t.Fatal("the whole catalogue and Get returned different objects for one scenario")
	}
	if len(c.IDs()) < 2 || c.IDs()[0] == "" {
		t.Fatalf("ids %v", c.IDs())
	}
}
