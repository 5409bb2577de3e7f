package grader

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestEtcdSnapshotNeedsItsHashAndTheKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "db")
	b, err := bolt.Open(file, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		k, err := tx.CreateBucket([]byte("key"))
		if err != nil {
			return err
		}
		return k.Put([]byte("rev-1"), []byte("\x0a\x1c/registry/configmaps/shop/orders\x10\x01"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	snapshot := append(append([]byte{}, raw...), sum[:]...)

	if _, why := snapshotDatabase(raw); !strings.Contains(why, "no integrity hash") {
		t.Errorf("a copied database file: %q, want no integrity hash", why)
	}
	damaged := append([]byte{}, snapshot...)
	damaged[100] ^= 0xff
	if _, why := snapshotDatabase(damaged); !strings.Contains(why, "damaged") {
		t.Errorf("a damaged snapshot: %q, want damaged", why)
	}
	db, why := snapshotDatabase(snapshot)
	if why != "" {
		t.Fatalf("a snapshot: %s", why)
	}
	for key, want := range map[string]bool{"/registry/configmaps/shop/orders": true, "/registry/configmaps/shop/invoices": false} {
		if got, err := holdsKey(db, key); err != nil || got != want {
			t.Errorf("holdsKey(%s) = %v, %v; want %v", key, got, err, want)
		}
	}
}
