package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/agnivade/levenshtein"
)

//go:embed catalog/*.yaml
var catalogFS embed.FS

// BaseImages are the workload images every lab cluster gets, whatever the scenarios declare: the images of the
// exam's everyday manifests.
var BaseImages = []string{"nginx:1.27", "busybox:1.36"}

// Catalog is every scenario lab ships, by id.
type Catalog struct {
	byID map[string]*Scenario
	ids  []string
}

var (
	builtin     *Catalog
	builtinErr  error
	builtinOnce sync.Once
)

// Builtin returns the embedded catalogue, parsed once.
func Builtin() (*Catalog, error) {
	builtinOnce.Do(func() { builtin, builtinErr = LoadFS(catalogFS, "catalog") })
	return builtin, builtinErr
}

// LoadFS parses every *.yaml under dir of fsys; all problems of all files are reported together.
func LoadFS(fsys fs.FS, dir string) (*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read scenarios in %s: %w", dir, err)
	}
	c := &Catalog{byID: map[string]*Scenario{}}
	var errs Errors
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".yaml" {
			continue
		}
		name := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		s, err := Parse("scenarios/"+name, data)
		var perr Errors
		if errors.As(err, &perr) {
			errs = append(errs, perr...)
			continue
		}
		if err != nil {
			return nil, err
		}
		if prev, dup := c.byID[s.ID]; dup {
			errs = append(errs, Error{File: s.File, Line: s.line("id"), Field: "id", Msg: "duplicate of " + prev.File})
			continue
		}
		c.byID[s.ID] = s
		c.ids = append(c.ids, s.ID)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c.sort()
	return c, nil
}

// sort orders ids by journey stage, then id: the order `lab list` shows and e2e runs.
func (c *Catalog) sort() {
	sort.Slice(c.ids, func(i, j int) bool {
		a, b := c.byID[c.ids[i]], c.byID[c.ids[j]]
		ai, bi := a.Stage.Index(), b.Stage.Index()
		if ai != bi {
			return ai < bi
		}
		return a.ID < b.ID
	})
}

// IDs lists scenario ids in journey order.
func (c *Catalog) IDs() []string { return append([]string(nil), c.ids...) }

// All lists scenarios in journey order.
func (c *Catalog) All() []*Scenario {
	out := make([]*Scenario, len(c.ids))
	for i, id := range c.ids {
		out[i] = c.byID[id]
	}
	return out
}

// Get returns a scenario; an unknown id gets an error suggesting the nearest ids.
func (c *Catalog) Get(id string) (*Scenario, error) {
	if s, ok := c.byID[id]; ok {
		return s, nil
	}
	msg := fmt.Sprintf("unknown scenario %q", id)
	if near := c.Nearest(id, 3); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, ", ") + "?"
	}
	return nil, fmt.Errorf("%s (run `lab list` to see them all)", msg)
}

// Nearest returns up to n ids closest to id by edit distance, or containing it.
func (c *Catalog) Nearest(id string, n int) []string {
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	for _, other := range c.ids {
		d := levenshtein.ComputeDistance(id, other)
		if strings.Contains(other, id) && id != "" {
			d = 0
		}
		if d <= max(3, len(id)/2) {
			cs = append(cs, cand{other, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].id < cs[j].id })
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].id)
	}
	return out
}

// Images is every workload image the catalogue declares, plus BaseImages, sorted and without duplicates.
func (c *Catalog) Images() []string {
	all := append([]string(nil), BaseImages...)
	for _, s := range c.byID {
		all = append(all, s.Images...)
	}
	sort.Strings(all)
	return dedupe(all)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
