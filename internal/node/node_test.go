package node

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/exec"
)

// fakeNode answers every command with one output and error, as a node container would.
type fakeNode struct {
	out string
	err error
}

func (f fakeNode) String() string                     { return "lab-worker" }
func (f fakeNode) Role() (string, error)              { return "worker", nil }
func (f fakeNode) IP() (string, string, error)        { return "172.18.0.3", "", nil }
func (f fakeNode) SerialLogs(io.Writer) error         { return nil }
func (f fakeNode) Command(string, ...string) exec.Cmd { return &fakeCmd{f: f} }
func (f fakeNode) CommandContext(context.Context, string, ...string) exec.Cmd {
	return &fakeCmd{f: f}
}

type fakeCmd struct {
	f      fakeNode
	stdout io.Writer
}

func (c *fakeCmd) Run() error {
	if c.stdout != nil {
		_, _ = io.WriteString(c.stdout, c.f.out)
	}
	return c.f.err
}
func (c *fakeCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *fakeCmd) SetStdin(io.Reader) exec.Cmd    { return c }
func (c *fakeCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *fakeCmd) SetStderr(io.Writer) exec.Cmd   { return c }

func TestUnitState(t *testing.T) {
	exit3 := errors.New("exit status 3")
	for _, tc := range []struct {
		name, out string
		err       error
		want      string
		unknown   bool
	}{
		{name: "active", out: "active\n", want: "active"},
		{name: "stopped unit exits 3 but is a state", out: "inactive\n", err: exit3, want: "inactive"},
		{name: "failed unit", out: "failed\n", err: exit3, want: "failed"},
		{name: "node did not answer", out: "Error response from daemon: container is not running\n", err: errors.New("exit status 1"), unknown: true},
		{name: "systemd down", out: "System has not been booted with systemd\n", err: errors.New("exit status 1"), unknown: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnitState(context.Background(), fakeNode{out: tc.out, err: tc.err}, "kubelet")
			if tc.unknown {
				if !errors.Is(err, ErrUnitState) {
					t.Fatalf("UnitState = %q, %v; want ErrUnitState", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("UnitState = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestReadFileAndDigest(t *testing.T) {
	ctx := context.Background()
	if _, ok, err := ReadFile(ctx, fakeNode{out: absent}, "/x"); ok || err != nil {
		t.Fatalf("absent file: exists %v, %v", ok, err)
	}
	if got, ok, err := ReadFile(ctx, fakeNode{out: "a: b\n"}, "/x"); !ok || err != nil || got != "a: b\n" {
		t.Fatalf("ReadFile = %q %v %v", got, ok, err)
	}
	if _, ok, dir, err := FileDigest(ctx, fakeNode{out: "absent \n"}, "/x"); ok || dir != "" || err != nil {
		t.Fatalf("absent digest: %v %q %v", ok, dir, err)
	}
	if _, ok, dir, err := FileDigest(ctx, fakeNode{out: "absent /opt/deploy\n"}, "/opt/deploy/web/base/k.yaml"); ok || dir != "/opt/deploy" || err != nil {
		t.Fatalf("absent digest in a missing directory: %v %q %v", ok, dir, err)
	}
	if got, ok, dir, err := FileDigest(ctx, fakeNode{out: "abc123  /x\n"}, "/x"); !ok || dir != "" || err != nil || got != "abc123" {
		t.Fatalf("FileDigest = %q %v %q %v", got, ok, dir, err)
	}
}

func TestPluginBinary(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{`{"cniVersion":"0.3.1","name":"kindnet","plugins":[{"type":"ptp"},{"type":"portmap"}]}`, "/opt/cni/bin/ptp"},
		{`{"cniVersion":"0.3.0","name":"mynet","type":"bridge"}`, "/opt/cni/bin/bridge"},
	} {
		got, err := pluginBinary("10-net.conflist", "lab-worker", []byte(tc.conf))
		if err != nil || got != tc.want {
			t.Errorf("pluginBinary(%s) = %q, %v; want %q", tc.conf, got, err, tc.want)
		}
	}
	if _, err := pluginBinary("x", "lab-worker", []byte(`{"name":"x"}`)); err == nil {
		t.Error("a config without a plugin type must be an error")
	}
}

func TestParseUnitTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"@1733400000", time.Unix(1733400000, 0), true},
		{"1733400000", time.Unix(1733400000, 0), true},
		{"@0", time.Time{}, false},
		{"", time.Time{}, false},
		{"n/a", time.Time{}, false},
	} {
		got, ok := ParseUnitTimestamp(tc.in)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ParseUnitTimestamp(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
