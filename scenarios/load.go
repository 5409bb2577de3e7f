package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a scenario file, with its position.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e Error) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", pos, e.Field, e.Msg)
}

// Errors is every problem found in one or more files.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Parse decodes one scenario file strictly (unknown fields are errors) and validates it.
func Parse(file string, data []byte) (*Scenario, error) {
	s, err := decode(file, data)
	if err != nil {
		return nil, err
	}
	if errs := s.Validate(); len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// ParseFiles reads and parses scenario files. The problems found in them come back together as Errors, with
// the scenarios that parsed; a file that cannot be read is an error of its own.
func ParseFiles(paths []string) ([]*Scenario, Errors, error) {
	var scs []*Scenario
	var problems Errors
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		s, err := Parse(path, data)
		var errs Errors
		switch {
		case errors.As(err, &errs):
			problems = append(problems, errs...)
		case err != nil:
			return nil, nil, err
		default:
			scs = append(scs, s)
		}
	}
	return scs, problems, nil
}

var typeErrLine = regexp.MustCompile(`^line (\d+): (.*)$`)

func decode(file string, data []byte) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, err)
	}
	if len(root.Content) == 0 {
		return nil, Errors{{File: file, Line: 1, Msg: "empty scenario file"}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	s := &Scenario{}
	if err := dec.Decode(s); err != nil {
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Msg: "one scenario per file: remove the second YAML document"}}
	}
	s.File, s.Source, s.root = file, data, &root
	return s, nil
}

// yamlError turns yaml.v3's messages ("line 5: field x not found in type scenarios.Check") into file:line errors.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	var out Errors
	if errors.As(err, &te) {
		for _, m := range te.Errors {
			out = append(out, lineError(file, m))
		}
		return out
	}
	return Errors{lineError(file, strings.TrimPrefix(err.Error(), "yaml: "))}
}

func lineError(file, msg string) Error {
	m := typeErrLine.FindStringSubmatch(msg)
	if m == nil {
		return Error{File: file, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	text := m[2]
	if f := regexp.MustCompile(`^field (\S+) not found in type scenarios\.(\w+)$`).FindStringSubmatch(text); f != nil {
		return Error{File: file, Line: line, Field: f[1], Msg: fmt.Sprintf("unknown field in %s (check the spelling; see scenarios/README.md)", f[2])}
	}
	return Error{File: file, Line: line, Msg: text}
}

// line returns the line of the node at path (mapping keys and sequence indexes), or of the deepest node found.
func (s *Scenario) line(path ...any) int {
	if s.root == nil || len(s.root.Content) == 0 {
		return 0
	}
	n := s.root.Content[0]
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						line, next = n.Content[i].Line, n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}
