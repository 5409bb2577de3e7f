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
	// lazy is set for the embedded catalogue: a command about one scenario parses only its file (Get), since
	// parsing all of them costs a tenth of a CPU-second, paid by every lab command; whatever lists the
	// catalogue parses it whole, once.
	lazy *lazyFiles
	byID map[string]*Scenario
	ids  []string
}

// lazyFiles are the embedded catalogue's files by id (the file name: Validate makes them equal), parsed on
// demand.
type lazyFiles struct {
	fsys  fs.FS
	dir   string
	files map[string]string
	mu    sync.Mutex
	one   map[string]*Scenario
	whole sync.Once
	err   error
}

var (
	builtin     *Catalog
	builtinErr  error
	builtinOnce sync.Once
)

// Builtin returns the embedded catalogue.
func Builtin() (*Catalog, error) {
	builtinOnce.Do(func() { builtin, builtinErr = lazyFS(catalogFS, "catalog") })
	return builtin, builtinErr
}

func lazyFS(fsys fs.FS, dir string) (*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read scenarios in %s: %w", dir, err)
	}
	l := &lazyFiles{fsys: fsys, dir: dir, files: map[string]string{}, one: map[string]*Scenario{}}
	c := &Catalog{lazy: l}
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".yaml" {
			l.files[strings.TrimSuffix(e.Name(), ".yaml")] = path.Join(dir, e.Name())
		}
	}
	return c, nil
}

// Load parses the whole catalogue now and returns its problems, file:line each, as lint reports them.
func (c *Catalog) Load() error {
	if c.lazy == nil {
		return nil
	}
	c.lazy.whole.Do(func() {
		whole, err := LoadFS(c.lazy.fsys, c.lazy.dir)
		if err != nil {
			c.lazy.err = err
			return
		}
		// A scenario Get already returned stays the same object for the caller that holds it.
		c.lazy.mu.Lock()
		defer c.lazy.mu.Unlock()
		for id, s := range c.lazy.one {
			whole.byID[id] = s
		}
		for id, s := range whole.byID {
			c.lazy.one[id] = s
		}
		c.byID, c.ids = whole.byID, whole.ids
	})
	return c.lazy.err
}

// loadAll parses the lazy catalogue whole for the listings. The embedded files are lab's own data, proven to
// parse by its unit tests and `lab scenario lint` in CI, so a failure here is a broken build, not a user's
// mistake.
func (c *Catalog) loadAll() {
	if err := c.Load(); err != nil {
		panic(fmt.Sprintf("the built-in scenario catalogue does not parse (run `lab scenario lint`): %v", err))
	}
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
		s, err := parseFile(fsys, path.Join(dir, e.Name()))
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
func (c *Catalog) IDs() []string {
	c.loadAll()
	return append([]string(nil), c.ids...)
}

// All lists scenarios in journey order.
func (c *Catalog) All() []*Scenario {
	c.loadAll()
	out := make([]*Scenario, len(c.ids))
	for i, id := range c.ids {
		out[i] = c.byID[id]
	}
	return out
}

// Get returns a scenario; an unknown id gets an error suggesting the nearest ids.
func (c *Catalog) Get(id string) (*Scenario, error) {
	if c.lazy != nil {
		if file, ok := c.lazy.files[id]; ok {
			return c.lazy.get(id, file)
		}
	} else if s, ok := c.byID[id]; ok {
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
	c.loadAll()
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
	c.loadAll()
	all := append([]string(nil), BaseImages...)
	for _, s := range c.byID {
		all = append(all, s.Images...)
	}
	sort.Strings(all)
	return dedupe(all)
}

// get parses one file of the lazy catalogue, once; the whole catalogue, once parsed, has it too.
func (l *lazyFiles) get(id, file string) (*Scenario, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.one[id]; ok {
		return s, nil
	}
	s, err := parseFile(l.fsys, file)
	if err != nil {
		return nil, err
	}
	l.one[id] = s
	return s, nil
}

// parseFile parses the scenario file name of fsys, which problems name as under scenarios/ (the repository
// path of the embedded catalogue).
func parseFile(fsys fs.FS, name string) (*Scenario, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	return Parse("scenarios/"+name, data)
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
