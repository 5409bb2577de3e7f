package injector

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cka-lab/lab/internal/state"
)

func TestLedgerFirstRecordWinsAndPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	l, err := OpenLedger(path)
	if err != nil || !l.Empty() {
		t.Fatalf("new ledger: %v %v", l, err)
	}
	ns := Entry{Object: &ObjectPrior{APIVersion: "v1", Kind: "Namespace", Name: "shop", Prior: json.RawMessage("null")}}
	node := Entry{Node: &NodePrior{Name: "lab-worker", Labels: map[string]string{"a": "b"}}}
	later := Entry{Node: &NodePrior{Name: "lab-worker", Labels: map[string]string{"a": "changed"}}}
	for _, e := range []Entry{ns, node, later} {
		if err := l.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	back, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Entries) != 2 {
		t.Fatalf("a second record of the same node must not replace the first: %d entries", len(back.Entries))
	}
	if back.Entries[1].Node.Labels["a"] != "b" {
		t.Errorf("prior state is the first one recorded, got %v", back.Entries[1].Node.Labels)
	}
	if got := back.createdNamespaces(); !got["shop"] || len(got) != 1 {
		t.Errorf("created namespaces: %v", got)
	}
	if err := back.pop(); err != nil {
		t.Fatal(err)
	}
	again, _ := OpenLedger(path)
	if len(again.Entries) != 1 {
		t.Errorf("pop must persist: %d entries", len(again.Entries))
	}
}

// A ledger that no longer decodes says reset cannot work without it and how to start over.
func TestCorruptLedgerSaysTheWayOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clusters", "lab", "ledger.json")
	if err := state.WriteFile(path, []byte("{\"entries\": [nul")); err != nil {
		t.Fatal(err)
	}
	_, err := OpenLedger(path)
	var corrupt *state.CorruptError
	if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), "lab cluster delete --name lab && lab cluster create --name lab") {
		t.Fatalf("corrupt ledger: %v, want a CorruptError with the way out", err)
	}
}
