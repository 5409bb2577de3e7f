package class

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var (
	bucketMeta     = []byte("meta")
	bucketLearners = []byte("learners")
	bucketKeys     = []byte("keys")
	bucketResults  = []byte("results")
	bucketNonces   = []byte("nonces")
	metaKey        = []byte("class")
)

var (
	errNameTaken  = errors.New("name taken")
	errUnknownKey = errors.New("unknown learner key")
	errReplayed   = errors.New("result already received")
	errLeft       = errors.New("learner left")
	errClassFull  = errors.New("class full")
)

// classMeta is the class itself: kept with the results so a restarted server resumes the same class and clock.
type classMeta struct {
	Plan          Plan   `json:"plan"`
	Token         string `json:"token"`
	InstructorKey string `json:"instructorKey"`
}

// learner is a joined learner. Of the key only a hash and the signing key derived from it are kept, so a
// copied data file cannot post as anyone.
type learner struct {
	Name     string    `json:"name"`
	KeyHash  string    `json:"keyHash"`
	SignKey  []byte    `json:"signKey"`
	JoinedAt time.Time `json:"joinedAt"`
	// Namespace is the learner's namespace on the shared cluster, where the server grades them.
	Namespace string `json:"namespace,omitempty"`
	// Left is set when the learner left: their key is refused from then on, and their name stays theirs.
	Left bool `json:"left,omitempty"`
}

// store keeps the class in one bbolt file, which also stops two servers from sharing a data directory.
type store struct{ db *bolt.DB }

func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create class data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "class.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("class data %s is in use by another class server: stop it or use another data directory", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open class data %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketLearners, bucketKeys, bucketResults, bucketNonces} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("prepare class data %s: %w", path, err)
	}
	return &store{db: db}, nil
}

func (s *store) close() error { return s.db.Close() }

// loadMeta returns the stored class, and false when the data directory is new.
func (s *store) loadMeta() (classMeta, bool, error) {
	var m classMeta
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketMeta).Get(metaKey)
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, &m)
	})
	if err != nil {
		return classMeta{}, false, fmt.Errorf("read stored class: %w", err)
	}
	return m, found, nil
}

func (s *store) saveMeta(m classMeta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode class: %w", err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaKey, raw) }); err != nil {
		return fmt.Errorf("save class: %w", err)
	}
	return nil
}

// admit says whether name may join (or come back) presenting key in a class of at most maxLearners:
// errNameTaken when the name is another key's, errLeft when its learner left, errClassFull when the class has
// no room for a new learner. It returns the stored learner when the name is already theirs.
func admit(tx *bolt.Tx, name, presentedKey string, maxLearners int) (*learner, error) {
	learners := tx.Bucket(bucketLearners)
	raw := learners.Get([]byte(strings.ToLower(name)))
	if raw == nil {
		n, c := 0, learners.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		if n >= maxLearners {
			return nil, errClassFull
		}
		return nil, nil
	}
	var l learner
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, err
	}
	switch {
	case l.Left:
		return nil, errLeft
	case presentedKey == "" || hashKey(presentedKey) != l.KeyHash:
		return nil, errNameTaken
	}
	return &l, nil
}

// checkJoin runs admit without changing anything, before the server prepares anything for the learner.
func (s *store) checkJoin(name, presentedKey string, maxLearners int) error {
	return s.db.View(func(tx *bolt.Tx) error {
		_, err := admit(tx, name, presentedKey, maxLearners)
		return err
	})
}

// join registers a new learner and returns a fresh key, or lets a learner back in who presents the key of
// the name. Names are unique regardless of case, so "Alice" and "alice" are never two rows on the board.
func (s *store) join(name, presentedKey, namespace string, maxLearners int, now time.Time) (learner, string, error) {
	var l learner
	key := presentedKey
	err := s.db.Update(func(tx *bolt.Tx) error {
		id := []byte(strings.ToLower(name))
		back, err := admit(tx, name, presentedKey, maxLearners)
		if err != nil {
			return err
		}
		if back != nil {
			l = *back
		} else {
			key = rand.Text()
			l = learner{Name: name, KeyHash: hashKey(key), SignKey: signingKey(key), JoinedAt: now}
			if err := tx.Bucket(bucketKeys).Put([]byte(l.KeyHash), id); err != nil {
				return err
			}
		}
		l.Namespace = namespace
		return putLearner(tx, l)
	})
	if errors.Is(err, errNameTaken) || errors.Is(err, errLeft) || errors.Is(err, errClassFull) {
		return learner{}, "", err
	}
	if err != nil {
		return learner{}, "", fmt.Errorf("save learner %s: %w", name, err)
	}
	return l, key, nil
}

// leave marks a learner as left, which revokes their key: the name stays theirs, and nobody posts with it.
func (s *store) leave(name string) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		var l learner
		if err := json.Unmarshal(tx.Bucket(bucketLearners).Get([]byte(strings.ToLower(name))), &l); err != nil {
			return err
		}
		l.Left = true
		return putLearner(tx, l)
	})
	if err != nil {
		return fmt.Errorf("save that %s left: %w", name, err)
	}
	return nil
}

func putLearner(tx *bolt.Tx, l learner) error {
	raw, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketLearners).Put([]byte(strings.ToLower(l.Name)), raw)
}

// learnerByKey finds whose key a request presents.
func (s *store) learnerByKey(key string) (learner, error) {
	var l learner
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketKeys).Get([]byte(hashKey(key)))
		if id == nil {
			return errUnknownKey
		}
		return json.Unmarshal(tx.Bucket(bucketLearners).Get(id), &l)
	})
	if errors.Is(err, errUnknownKey) {
		return learner{}, err
	}
	if err != nil {
		return learner{}, fmt.Errorf("look up learner: %w", err)
	}
	return l, nil
}

// learners lists everyone who joined.
func (s *store) learners() ([]learner, error) {
	var all []learner
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLearners).ForEach(func(_, raw []byte) error {
			var l learner
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			all = append(all, l)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read learners: %w", err)
	}
	return all, nil
}

// addResult appends a result; the sequence number keys keep results in arrival order. A nonce, when given,
// is remembered in the same transaction: a result whose nonce was seen is errReplayed and nothing is stored.
func (s *store) addResult(r Result, nonce string) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := rememberNonce(tx, r.Learner, nonce); err != nil {
			return err
		}
		b := tx.Bucket(bucketResults)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, seq), raw)
	})
	if errors.Is(err, errReplayed) {
		return err
	}
	if err != nil {
		return fmt.Errorf("save result of %s on %s: %w", r.Learner, r.Scenario, err)
	}
	return nil
}

// remember records a result's nonce without storing the result (the server grades it itself instead):
// errReplayed when it was seen before.
func (s *store) remember(learnerName, nonce string) error {
	err := s.db.Update(func(tx *bolt.Tx) error { return rememberNonce(tx, learnerName, nonce) })
	if err != nil && !errors.Is(err, errReplayed) {
		return fmt.Errorf("save the nonce of %s's result: %w", learnerName, err)
	}
	return err
}

// rememberNonce adds a learner's nonce, errReplayed when it is there already; "" is no nonce (the server's own
// results carry none).
func rememberNonce(tx *bolt.Tx, learnerName, nonce string) error {
	if nonce == "" {
		return nil
	}
	seen := tx.Bucket(bucketNonces)
	id := []byte(strings.ToLower(learnerName) + "\x00" + nonce)
	if seen.Get(id) != nil {
		return errReplayed
	}
	return seen.Put(id, []byte("1"))
}

// results returns every stored result in arrival order.
func (s *store) results() ([]Result, error) {
	var all []Result
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketResults).ForEach(func(_, raw []byte) error {
			var r Result
			if err := json.Unmarshal(raw, &r); err != nil {
				return err
			}
			all = append(all, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return all, nil
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
