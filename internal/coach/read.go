package coach

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/kindconfigs"
)

// noLog is what the read prints on a node without an audit log directory: a cluster created before lab
// configured auditing.
const noLog = "\x00lab-no-audit-log\x00"

// Read returns the audit events the control-plane node n holds, its one backup first; found is false on a
// cluster without an audit log.
func Read(ctx context.Context, n nodes.Node) (events []Event, found bool, err error) {
	// Backups are named audit-<timestamp>.log, so name order is age order, and the current log comes last.
	out, err := node.Run(ctx, n, "sh", "-c",
		`cd "$1" 2>/dev/null || { printf '\0lab-no-audit-log\0'; exit 0; }; cat $(ls audit-*.log 2>/dev/null) audit.log 2>/dev/null; true`,
		"sh", kindconfigs.AuditLogDir)
	if err != nil {
		return nil, false, fmt.Errorf("read the audit log on %s: %w", n, err)
	}
	if out == noLog {
		return nil, false, nil
	}
	events, err = Parse(strings.NewReader(out))
	return events, true, err
}
