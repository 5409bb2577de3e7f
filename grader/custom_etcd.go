package grader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/cka-lab/lab/internal/node"
)

func init() {
	Register("etcdSnapshot", etcdSnapshot)
}

// etcdSnapshot: the file args.path on args.node is an etcd snapshot as `etcdctl snapshot save` writes it (etcd's
// database followed by its SHA-256, which `etcdutl snapshot restore` verifies) and holds the key args.holds (an
// object created when the task began, so the snapshot is of the cluster as it is now). A copy of the live
// database file has no such hash, and etcd refuses to restore it without being told to skip the check.
func etcdSnapshot(ctx context.Context, e Env, args map[string]string) Result {
	n, err := e.nodeNamed(args["node"])
	if err != nil {
		return e.fail("%v", err)
	}
	path := args["path"]
	data, exists, err := node.ReadFile(ctx, n, path)
	if err != nil {
		return e.fail("read %s on %s: %v", path, n, err)
	}
	if !exists {
		return e.fail("there is no file %s on %s", path, n)
	}
	db, why := snapshotDatabase([]byte(data))
	if why != "" {
		return e.fail("%s on %s %s", path, n, why)
	}
	found, err := holdsKey(db, args["holds"])
	if err != nil {
		return e.fail("%s on %s is not an etcd database: %v", path, n, err)
	}
	if !found {
		return e.fail("%s on %s is an etcd snapshot, but of older data: it lacks %s, created when the task began", path, n, args["holds"])
	}
	return pass("%s on %s is an etcd snapshot (%d bytes, integrity hash intact) that holds %s", path, n, len(data), args["holds"])
}

// snapshotDatabase checks the SHA-256 etcd appends to a snapshot and returns the database before it, or why the
// data is no snapshot. etcd tells a snapshot from a plain database file the same way: the database is a whole
// number of 512-byte pages, so a snapshot is 32 bytes longer than one.
func snapshotDatabase(data []byte) (db []byte, why string) {
	if len(data)%512 != sha256.Size {
		return nil, fmt.Sprintf("is %d bytes, not an etcd snapshot: no integrity hash after the database (a copy of etcd's database file is not a snapshot; `etcdctl snapshot save` writes one)", len(data))
	}
	db, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if h := sha256.Sum256(db); !bytes.Equal(h[:], sum) {
		return nil, "is damaged: its integrity hash does not match its content"
	}
	return db, ""
}

// holdsKey opens the database read-only and looks for key among the stored revisions of every key.
func holdsKey(db []byte, key string) (bool, error) {
	dir, err := os.MkdirTemp("", "lab-etcd-snapshot-")
	if err != nil {
		return false, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "db")
	if err := os.WriteFile(file, db, 0o600); err != nil {
		return false, err
	}
	b, err := bolt.Open(file, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer func() { _ = b.Close() }()
	found := false
	err = b.View(func(tx *bolt.Tx) error {
		bucket := tx.Bucket([]byte("key"))
		if bucket == nil {
			return fmt.Errorf("no bucket of keys")
		}
		// Each value is a revision's mvccpb.KeyValue, whose encoding holds the key's bytes as they are.
		return bucket.ForEach(func(_, v []byte) error {
			found = found || bytes.Contains(v, []byte(key))
			return nil
		})
	})
	return found, err
}
