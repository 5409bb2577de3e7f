package commands

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// run runs lab with args on a fresh state directory, its input read from stdin.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	t.Setenv("NO_COLOR", "1")
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestOutputFormats(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"text by default", []string{"list", "--stage", "image"}, 0, "bad-image-tag", ""},
		{"text by name", []string{"list", "--stage", "image", "-o", "text"}, 0, "bad-image-tag", ""},
		{"json", []string{"list", "--stage", "image", "-o", "json"}, 0, `"id":"bad-image-tag"`, ""},
		{"an unknown format says what to use", []string{"list", "-o", "yaml"}, 1, "", "use -o json or -o text"},
		{"every command with -o shares the check", []string{"progress", "-o", "wide"}, 1, "", "use -o json or -o text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("lab %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, stdout, stderr)
			}
		})
	}
}

func TestProgressJSONOnAnEmptyHistory(t *testing.T) {
	stdout, stderr, code := run(t, "", "progress", "-o", "json")
	var p progressJSON
	if code != 0 || json.Unmarshal([]byte(stdout), &p) != nil || p.Attempts != 0 || p.Weakest == "" {
		t.Fatalf("exit %d, %s %s", code, stdout, stderr)
	}
}

// A hint is confirmed on the command's input stream, which must be a terminal; a pipe is refused before any
// cluster is looked for.
func TestHintAsksOnlyOnATerminal(t *testing.T) {
	_, stderr, code := run(t, "y\n", "hint")
	if code == 0 || !strings.Contains(stderr, "lab hint --yes") {
		t.Errorf("hint with a piped answer: exit %d, %s", code, stderr)
	}
}
