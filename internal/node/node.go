// Package node runs commands inside a kind node container, as `lab ssh` (the exam's ssh) would: files, their
// digests, systemd units, and which CNI the node runs. The injector, the grader and the baseline all read
// nodes through it, so the grader links no fault code.
package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// Run runs a command in a node container and returns its combined output; on failure the error carries it.
func Run(ctx context.Context, n nodes.Node, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := n.CommandContext(ctx, name, args...)
	cmd.SetStdout(&out)
	cmd.SetStderr(&out)
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s on %s: %s: %w", name, strings.Join(args, " "), n, strings.TrimSpace(out.String()), err)
	}
	return out.String(), nil
}

// absent is what the scripts below print for a missing file: no file can have it as its whole content and
// digest at once, and it keeps "missing" apart from "could not read".
const absent = "\x00lab-absent\x00"

// ReadFile returns a file's content, or exists false when there is no such file.
func ReadFile(ctx context.Context, n nodes.Node, path string) (content string, exists bool, err error) {
	out, err := Run(ctx, n, "sh", "-c", `[ -e "$1" ] || { printf '\0lab-absent\0'; exit 0; }; cat "$1"`, "sh", path)
	if err != nil {
		return "", false, err
	}
	if out == absent {
		return "", false, nil
	}
	return out, true, nil
}

// FileDigest returns a file's SHA-256 (of its mode and content; of a directory: of its names, modes and
// contents), so a revert restores a mode a fault changed too, or exists false when
// there is no such file; then missingDir is the outermost of its ancestor directories that is missing too (""
// when its directory exists), which whoever writes the file will create.
func FileDigest(ctx context.Context, n nodes.Node, path string) (sum string, exists bool, missingDir string, err error) {
	out, err := Run(ctx, n, "sh", "-c", `if [ -d "$1" ]; then tar -C "$1" -cf - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner . | sha256sum; exit; fi
if [ -e "$1" ]; then { stat -c %a "$1"; cat "$1"; } | sha256sum; exit; fi
d=$(dirname "$1"); top=; while [ ! -e "$d" ]; do top=$d; d=$(dirname "$d"); done; echo "absent $top"`, "sh", path)
	if err != nil {
		return "", false, "", err
	}
	if rest, ok := strings.CutPrefix(out, "absent"); ok {
		return "", false, strings.TrimSpace(rest), nil
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return "", false, "", fmt.Errorf("sha256sum %s on %s printed nothing", path, n)
	}
	return f[0], true, "", nil
}

// unitStates are the states `systemctl is-active` prints; it exits non-zero for every one but "active", so
// only its output tells a stopped unit from a node that could not be asked.
var unitStates = []string{"active", "reloading", "inactive", "failed", "activating", "deactivating", "maintenance", "refreshing"}

// ErrUnitState is returned when a unit's state could not be read.
var ErrUnitState = errors.New("unit state unknown")

// UnitState returns a systemd unit's state as `systemctl is-active` prints it. A command that printed no
// known state (the node did not answer, systemd is down) is an error, not "inactive": a revert must not skip
// restarting a unit whose state it never learned.
func UnitState(ctx context.Context, n nodes.Node, unit string) (string, error) {
	out, err := Run(ctx, n, "systemctl", "is-active", unit)
	state := strings.TrimSpace(out)
	for _, s := range unitStates {
		if state == s {
			return s, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("systemctl is-active %s on %s printed %q", unit, n, state)
	}
	return "", fmt.Errorf("%w: %w", ErrUnitState, err)
}

// UnitStarted returns when a systemd unit last entered the active state; zero when it never has.
func UnitStarted(ctx context.Context, n nodes.Node, unit string) (time.Time, error) {
	out, err := Run(ctx, n, "systemctl", "show", unit, "--timestamp=unix", "-p", "ActiveEnterTimestamp", "--value")
	if err != nil {
		return time.Time{}, err
	}
	t, _ := ParseUnitTimestamp(strings.TrimSpace(out))
	return t, nil
}

// ParseUnitTimestamp reads a timestamp as `systemctl show --timestamp=unix` prints it ("@1733400000"); false
// when it is empty or zero (a unit that never started).
func ParseUnitTimestamp(v string) (time.Time, bool) {
	sec, err := strconv.ParseInt(strings.TrimPrefix(v, "@"), 10, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}
