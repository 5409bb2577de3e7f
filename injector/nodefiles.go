package injector

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/scenarios"
)

// backupDir keeps originals inside the node itself: files like CNI plugins are megabytes, and a node is where
// a learner restoring by hand would look for them anyway.
const backupDir = "/var/lib/lab-backup"

func (i *Injector) recordFile(ctx context.Context, n nodes.Node, path string) error {
	e := Entry{File: &FilePrior{Node: n.String(), Path: path}}
	if i.ledger.Has(e) {
		return nil
	}
	sum, existed, missingDir, err := node.FileDigest(ctx, n, path)
	if err != nil {
		return err
	}
	e.File.Existed, e.File.SHA256, e.File.CreatedDir = existed, sum, missingDir
	if existed {
		h := sha256.Sum256([]byte(n.String() + path))
		e.File.Backup = backupDir + "/" + hex.EncodeToString(h[:8])
		if _, err := node.Run(ctx, n, "sh", "-c", `mkdir -p "$1" && cp -a "$2" "$3"`, "sh", backupDir, path, e.File.Backup); err != nil {
			return err
		}
	}
	return i.ledger.Record(e)
}

func (i *Injector) nodeFile(ctx context.Context, f *scenarios.NodeFileFault) error {
	n, err := i.node(f.Node)
	if err != nil {
		return err
	}
	recorded := f.Path
	if f.WholeDir {
		recorded = path.Dir(f.Path)
	}
	if err := i.recordFile(ctx, n, recorded); err != nil {
		return err
	}
	switch {
	case f.Replace != nil:
		content, err := node.Run(ctx, n, "cat", f.Path)
		if err != nil {
			return err
		}
		if !strings.Contains(content, f.Replace.Old) {
			return fmt.Errorf("%s on %s does not contain %q", f.Path, n, f.Replace.Old)
		}
		return writeNodeFile(ctx, n, f.Path, strings.ReplaceAll(content, f.Replace.Old, f.Replace.New))
	case f.Write != nil:
		return writeNodeFile(ctx, n, f.Path, *f.Write)
	case f.Remove:
		_, err = node.Run(ctx, n, "rm", "-f", f.Path)
	case f.MoveTo != "":
		if err := i.recordFile(ctx, n, f.MoveTo); err != nil {
			return err
		}
		_, err = node.Run(ctx, n, "mv", f.Path, f.MoveTo)
	case f.Chmod != "":
		_, err = node.Run(ctx, n, "chmod", f.Chmod, f.Path)
	}
	return err
}

// writeNodeFile replaces a file's content in place (keeping its mode and owner), as an editor on the node does,
// creating its directory if need be.
func writeNodeFile(ctx context.Context, n nodes.Node, path, content string) error {
	cmd := n.CommandContext(ctx, "sh", "-c", `mkdir -p "$(dirname "$1")" && cat > "$1"`, "sh", path)
	cmd.SetStdin(strings.NewReader(content))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("write %s on %s: %w", path, n, exec.RunErrorForError(err))
	}
	return nil
}

func (i *Injector) revertFile(ctx context.Context, p *FilePrior) error {
	n, err := i.node(p.Node)
	if err != nil {
		return err
	}
	if !p.Existed {
		_, err := node.Run(ctx, n, "rm", "-rf", "--", p.Path, p.CreatedDir)
		return err
	}
	sum, _, _, err := node.FileDigest(ctx, n, p.Path)
	if err != nil {
		return err
	}
	if sum != p.SHA256 {
		// A recorded directory comes back as it was, without what was added to it since. A file is copied beside
		// it under a dot name and renamed into place: a kubelet that reads a static Pod manifest while it is
		// half written refuses it and reads it again only at its next periodic pass, 20 s later.
		restore := `if [ -d "$2" ]; then rm -rf "$1"; cp -a "$2" "$1"; else t="$(dirname "$1")/.$(basename "$1").lab-restore" && cp -a "$2" "$t" && mv -f "$t" "$1"; fi`
		if _, err := node.Run(ctx, n, "sh", "-c", restore, "sh", p.Path, p.Backup); err != nil {
			return err
		}
	}
	_, err = node.Run(ctx, n, "rm", "-rf", p.Backup)
	return err
}

func (i *Injector) stopUnit(ctx context.Context, s *scenarios.NodeServiceFault) error {
	n, err := i.node(s.Node)
	if err != nil {
		return err
	}
	e := Entry{Unit: &UnitPrior{Node: s.Node, Unit: s.Unit}}
	state, err := node.UnitState(ctx, n, s.Unit)
	if err != nil {
		return err
	}
	e.Unit.Active = state == "active"
	if err := i.ledger.Record(e); err != nil {
		return err
	}
	_, err = node.Run(ctx, n, "systemctl", "stop", s.Unit)
	return err
}

func (i *Injector) revertUnit(ctx context.Context, p *UnitPrior) error {
	n, err := i.node(p.Node)
	if err != nil {
		return err
	}
	if !p.Active {
		return nil
	}
	verb := "start"
	if p.Restart {
		verb = "restart"
	}
	if _, err := node.Run(ctx, n, "systemctl", verb, p.Unit); err != nil {
		return err
	}
	err = kube.Poll(ctx, 300*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		state, err := node.UnitState(ctx, n, p.Unit)
		return err == nil && state == "active", nil
	})
	if err != nil {
		return fmt.Errorf("%s on %s did not become active: %w", p.Unit, p.Node, err)
	}
	return nil
}
