package rotation

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cka-lab/lab/scenarios"
)

// Change is what the last commits of a checkout changed, newest first: each commit's files and the Go
// identifiers on its changed lines and in its hunks' function headers.
type Change struct {
	Commits int
	Window  string
	edits   []edit
}

type edit struct {
	files  []string
	tokens map[string]bool
}

// ReadChange reads the last window commits of the checkout at dir and, where dir is a work tree with
// uncommitted changes, those too (a local run proves the change being made).
func ReadChange(ctx context.Context, dir string, window int) (*Change, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %s: %w", strings.Join(args, " "), strings.TrimSpace(stderr.String()), err)
		}
		return out, nil
	}
	out, err := git("rev-list", "--count", "HEAD")
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, fmt.Errorf("git rev-list --count HEAD: %w", err)
	}
	c := &Change{Commits: n, Window: fmt.Sprintf("the last %d commits and any uncommitted change", window)}
	if diff, err := git("diff", "-U0", "HEAD"); err == nil && len(diff) > 0 {
		c.edits = append(c.edits, parseDiff(diff))
	}
	out, err = git("log", "--format=%H", "-n", strconv.Itoa(window))
	if err != nil {
		return nil, err
	}
	for _, sha := range strings.Fields(string(out)) {
		diff, err := git("show", "--format=", "-U0", sha)
		if err != nil {
			return nil, err
		}
		c.edits = append(c.edits, parseDiff(diff))
	}
	return c, nil
}

var ident = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// parseDiff collects a unified diff's files and the identifiers of its changed lines and hunk headers.
func parseDiff(diff []byte) edit {
	e := edit{tokens: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(diff))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var goFile bool
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			f := line[strings.LastIndex(line, " b/")+3:]
			e.files = append(e.files, f)
			goFile = strings.HasSuffix(f, ".go") && !strings.HasPrefix(f, "e2e/")
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		case !goFile:
		case strings.HasPrefix(line, "@@"):
			if i := strings.LastIndex(line, "@@"); i > 1 {
				addTokens(e.tokens, line[i+2:])
			}
		case strings.HasPrefix(line, "+"), strings.HasPrefix(line, "-"):
			addTokens(e.tokens, line[1:])
		}
	}
	return e
}

func addTokens(into map[string]bool, s string) {
	for _, t := range ident.FindAllString(s, -1) {
		into[t] = true
	}
}

// Scenarios lists the scenarios the change touched, newest change first: those whose file changed, and those
// that use a check or fault kind whose Go type (or custom function's name) a changed Go line or the function
// around it names.
func (c *Change) Scenarios(all []*scenarios.Scenario) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range c.edits {
		for _, sc := range all {
			if seen[sc.ID] || !e.touches(sc) {
				continue
			}
			seen[sc.ID] = true
			out = append(out, sc.ID)
		}
	}
	return out
}

func (e edit) touches(sc *scenarios.Scenario) bool {
	for _, f := range e.files {
		if path.Dir(f) == "scenarios/catalog" && strings.TrimSuffix(path.Base(f), path.Ext(f)) == sc.ID {
			return true
		}
	}
	types, funcs := KindTokens(sc)
	for t := range types {
		if e.tokens[t] {
			return true
		}
	}
	for fn := range funcs {
		for t := range e.tokens {
			if len(fn) >= 4 && strings.Contains(strings.ToLower(t), strings.ToLower(fn)) {
				return true
			}
		}
	}
	return false
}

// KindTokens names the check and fault kinds a scenario uses as code names them: the Go type of each kind
// (sameObject by its field's name, as several simple kinds share its type), and each custom check's or fault's
// function name.
func KindTokens(sc *scenarios.Scenario) (types, funcs map[string]bool) {
	types, funcs = map[string]bool{}, map[string]bool{}
	add := func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Kind() != reflect.Pointer || f.IsNil() {
				continue
			}
			name := f.Type().Elem().Name()
			switch name {
			case "ObjectRef", "NodeFault":
				// Shared by simple kinds whose field names (Exists, Delete) every other change spells too.
				if name = v.Type().Field(i).Name; name != "SameObject" {
					continue
				}
			case "Custom":
				funcs[f.Interface().(*scenarios.Custom).Func] = true
			}
			types[name] = true
		}
	}
	for _, list := range [][]scenarios.Check{sc.Checks, sc.Symptom, sc.Collateral} {
		for _, c := range list {
			add(reflect.ValueOf(c))
		}
	}
	for _, f := range sc.Faults {
		add(reflect.ValueOf(f))
	}
	return types, funcs
}
