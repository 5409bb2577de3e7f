package class

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// archiveDir holds the classes a data directory held before, one directory per class ID.
const archiveDir = "archive"

// Archived is a class moved out of a data directory so a new one can start there.
type Archived struct {
	Plan Plan
	// Dir is where its data went; Namespaces counts its learners with a namespace on a shared cluster, whose
	// credentials there live on until they expire unless the class was ended.
	Dir        string
	Namespaces int
}

// Archive moves the class in dataDir, if any, to dataDir/archive/<class id>/: its database (token, learners'
// key hashes, results) and instructor key, so a new class there starts with a new token and instructor key,
// and no learner key of the old one opens it. The server certificate stays, and with it the fingerprint.
// It returns nil when dataDir holds no class.
func Archive(dataDir string) (*Archived, error) {
	db := filepath.Join(dataDir, "class.db")
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	st, err := openStore(dataDir)
	if err != nil {
		return nil, err
	}
	meta, found, err := st.loadMeta()
	var learners []learner
	if err == nil {
		learners, err = st.learners()
	}
	if err := errors.Join(err, st.close()); err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	a := &Archived{Plan: meta.Plan, Dir: filepath.Join(dataDir, archiveDir, meta.Plan.ClassID)}
	for _, l := range learners {
		if l.Namespace != "" && !l.Left {
			a.Namespaces++
		}
	}
	if _, err := os.Stat(a.Dir); err == nil {
		return nil, fmt.Errorf("class %s is archived already in %s: move that directory away, or serve with another --data-dir", meta.Plan.ClassID, a.Dir)
	}
	if err := os.MkdirAll(a.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("archive class %s: %w", meta.Plan.ClassID, err)
	}
	for _, name := range []string{"class.db", instructorKeyFile} {
		err := os.Rename(filepath.Join(dataDir, name), filepath.Join(a.Dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("archive class %s: %w", meta.Plan.ClassID, err)
		}
	}
	return a, nil
}
