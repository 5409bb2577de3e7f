package coach

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/kindconfigs"
)

// noLog is what the read prints on a node without an audit log directory: a cluster created before lab
// configured auditing.
const noLog = "\x00lab-no-audit-log\x00"

// Read returns the audit events the control-plane node n holds from since on (and some before it), its one
// backup first; found is false on a cluster without an audit log.
func Read(ctx context.Context, n nodes.Node, since time.Time) (events []Event, found bool, err error) {
	// Backups are named audit-<timestamp>.log, so name order is age order, and the current log comes last. A
	// backup last written before since holds nothing the caller keeps: skipping it halves what a check reads
	// once the log has rotated (4 MiB each).
	out, err := node.Run(ctx, n, "sh", "-c",
		`cd "$1" 2>/dev/null || { printf '\0lab-no-audit-log\0'; exit 0; }
for f in $(ls audit-*.log 2>/dev/null); do [ "$(stat -c %Y "$f")" -lt "$2" ] || cat "$f"; done
cat audit.log 2>/dev/null; true`,
		"sh", kindconfigs.AuditLogDir, strconv.FormatInt(since.Unix(), 10))
	if err != nil {
		return nil, false, fmt.Errorf("read the audit log on %s: %w", n, err)
	}
	if out == noLog {
		return nil, false, nil
	}
	events, err = Parse(strings.NewReader(out))
	return events, true, err
}
