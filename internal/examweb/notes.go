package examweb

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
)

// Note is the learner's own word on a question: what they jotted down, and whether they count it done.
type Note struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
}

// notes keeps every question's Note in one JSON file, by question number, rewritten whole on each change: a
// page restarted (or a second tab) finds them as they were.
type notes struct {
	file string
	mu   sync.Mutex
	m    map[int]Note
}

func openNotes(file string) (*notes, error) {
	n := &notes{file: file, m: map[int]Note{}}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return n, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the exam's notes: %w", err)
	}
	if err := json.Unmarshal(b, &n.m); err != nil {
		return nil, fmt.Errorf("read the exam's notes %s: %w", file, err)
	}
	return n, nil
}

func (n *notes) all() map[int]Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return maps.Clone(n.m)
}

// set records question q's note; an empty one is forgotten.
func (n *notes) set(q int, note Note) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	next := maps.Clone(n.m)
	if note == (Note{}) {
		delete(next, q)
	} else {
		next[q] = note
	}
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(n.file), 0o700); err != nil {
		return fmt.Errorf("save the exam's notes: %w", err)
	}
	// A crash mid-write leaves the old notes, never half of the new.
	tmp := n.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("save the exam's notes: %w", err)
	}
	if err := os.Rename(tmp, n.file); err != nil {
		return fmt.Errorf("save the exam's notes: %w", err)
	}
	n.m = next
	return nil
}
