// Package state keeps what lab knows between commands in the XDG state directory: the clusters it created,
// their kubeconfigs, and the scenario in progress. Files are 0600 and written atomically, because they hold
// credentials and a half-written record would make lab distrust its own cluster.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is lab's state directory: $LAB_STATE_DIR, else $XDG_STATE_HOME/lab, else ~/.local/state/lab.
func Dir() (string, error) {
	if d := os.Getenv("LAB_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "lab"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find lab's state directory: set XDG_STATE_HOME or HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "lab"), nil
}

// Store is the state directory of one machine.
type Store struct{ root string }

// Open returns the store at Dir().
func Open() (*Store, error) {
	d, err := Dir()
	if err != nil {
		return nil, err
	}
	return &Store{root: d}, nil
}

// At returns a store rooted at dir (tests, and tools that keep their own).
func At(dir string) *Store { return &Store{root: dir} }

// Root is the store's directory.
func (s *Store) Root() string { return s.root }

// ClusterDir is where one cluster's files live.
func (s *Store) ClusterDir(cluster string) string { return filepath.Join(s.root, "clusters", cluster) }

// Path returns a file of a cluster.
func (s *Store) Path(cluster, file string) string { return filepath.Join(s.ClusterDir(cluster), file) }

// ErrNotFound is returned by Read when the record does not exist.
var ErrNotFound = errors.New("not found")

// Read decodes a cluster's JSON record into v.
func (s *Store) Read(cluster, file string, v any) error {
	b, err := os.ReadFile(s.Path(cluster, file))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", s.Path(cluster, file), ErrNotFound)
	}
	if err != nil {
		return err
	}
	return Decode(s.Path(cluster, file), b, v)
}

// Decode decodes data, read from the cluster state file at path, into v; data that does not decode is a
// *CorruptError.
func Decode(path string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return &CorruptError{Path: path, Err: err}
	}
	return nil
}

// CorruptError is a cluster's state file that no longer decodes (a full disk, an edit by hand). Its message
// is one line that says how to get past it, instead of a JSON error the learner can do nothing with.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("lab's state file %s is corrupt (%v): %s", e.Path, e.Err, wayOut(filepath.Base(filepath.Dir(e.Path)), filepath.Base(e.Path)))
}

func (e *CorruptError) Unwrap() error { return e.Err }

// wayOut says how to get past a corrupt file of cluster with the commands that still work without it. The
// files are other packages', named here because the store is where every one of them is read.
func wayOut(cluster, file string) string {
	switch file {
	case "cluster.json":
		// Without its record lab cannot prove the cluster is its own, so `lab cluster delete` refuses it.
		return fmt.Sprintf("lab no longer knows the cluster as its own: delete it with `kind delete cluster --name %[1]s`, then run `lab cluster create --name %[1]s`", cluster)
	case "ledger.json", "baseline.json":
		// The ledger is what the scenario changed, the baseline what reset returns to: reset needs both.
		return fmt.Sprintf("`lab reset` cannot restore the cluster without it: recreate the cluster with `lab cluster delete --name %[1]s && lab cluster create --name %[1]s`", cluster)
	case "attempt.json":
		return fmt.Sprintf("run `lab reset --name %s`, which restores the cluster without it and removes it, or delete it", cluster)
	case "exam.json":
		return fmt.Sprintf("delete it, which ends the exam, then run `lab reset --name %s` to restore the cluster", cluster)
	}
	return "delete it: lab does without it and writes it again when it needs it"
}

// Write encodes v as a cluster's JSON record.
func (s *Store) Write(cluster, file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", file, err)
	}
	return WriteFile(s.Path(cluster, file), append(b, '\n'))
}

// Remove deletes a cluster's record; a missing one is not an error.
func (s *Store) Remove(cluster, file string) error {
	if err := os.Remove(s.Path(cluster, file)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveCluster forgets a cluster.
func (s *Store) RemoveCluster(cluster string) error { return os.RemoveAll(s.ClusterDir(cluster)) }

// ClearCluster removes everything recorded about a cluster but its lock, which the caller may hold: a new
// cluster must not inherit the baseline, attempt or ledger of a same-named one removed behind lab's back.
func (s *Store) ClearCluster(cluster string) error {
	entries, err := os.ReadDir(s.ClusterDir(cluster))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == "lock" || e.Name() == "lock.owner" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.ClusterDir(cluster), e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes data to path atomically with mode 0600, creating 0700 parents.
func WriteFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
