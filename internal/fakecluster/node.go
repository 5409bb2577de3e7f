package fakecluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
)

// File is a file or directory on a fake node.
type File struct {
	Data string
	Mode fs.FileMode
	Dir  bool
}

// Node is a kind node whose commands act on memory: the commands and scripts lab runs on nodes (package
// node's, the injector's, the baseline's) are recognised and done to its files, units, kernel parameters and
// static Pods; any other command fails, so a script lab changes shows up as a failing test, not a silent
// pass. It records every command it runs.
type Node struct {
	name, role string

	mu       sync.Mutex
	files    map[string]File
	units    map[string]string
	started  map[string]time.Time
	sysctls  map[string]string
	commands [][]string

	// KubeletStarted is called whenever the kubelet starts (the API renews the node's lease then).
	KubeletStarted func()
	// Helm runs a helm command the node's /usr/local/bin/helm was given.
	Helm func(args []string) error
}

var _ nodes.Node = (*Node)(nil)

// NewNode returns a node named name with role (kind's "control-plane" or "worker"), its kubelet and
// containerd active, and no files.
func NewNode(name, role string) *Node {
	n := &Node{
		name: name, role: role,
		files:   map[string]File{"/": {Dir: true, Mode: 0o755}},
		units:   map[string]string{"kubelet": "active", "containerd": "active"},
		started: map[string]time.Time{},
		sysctls: map[string]string{},
	}
	return n
}

// String is the node's name.
func (n *Node) String() string { return n.name }

// Role is kind's role of the node.
func (n *Node) Role() (string, error) { return n.role, nil }

// IP has no meaning for a fake node.
func (n *Node) IP() (string, string, error) {
	return "", "", errors.New("fakecluster: a fake node has no address")
}

// SerialLogs has nothing to say.
func (n *Node) SerialLogs(io.Writer) error { return nil }

// Command returns a command that runs on the node.
func (n *Node) Command(name string, args ...string) exec.Cmd {
	return &cmd{node: n, canceled: context.Background().Err, argv: append([]string{name}, args...)}
}

// CommandContext returns a command that runs on the node.
func (n *Node) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &cmd{node: n, canceled: ctx.Err, argv: append([]string{name}, args...)}
}

// WriteFile puts a file on the node, with its directories.
func (n *Node) WriteFile(p, data string, mode fs.FileMode) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mkdirAll(path.Dir(p))
	n.files[p] = File{Data: data, Mode: mode}
}

// MkdirAll makes a directory on the node, with its parents.
func (n *Node) MkdirAll(p string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mkdirAll(p)
}

// ReadFile returns a file's content; false when there is no such file.
func (n *Node) ReadFile(p string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f, ok := n.files[p]
	return f.Data, ok && !f.Dir
}

// SetSysctl sets a kernel parameter.
func (n *Node) SetSysctl(key, value string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sysctls[key] = value
}

// SetUnit sets a systemd unit's state ("active", "inactive").
func (n *Node) SetUnit(unit, state string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.units[unit] = state
}

// State is everything the node holds, for comparing one moment with another.
type State struct {
	Files   map[string]File
	Units   map[string]string
	Sysctls map[string]string
}

// State returns a copy of what the node holds.
func (n *Node) State() State {
	n.mu.Lock()
	defer n.mu.Unlock()
	return State{Files: maps.Clone(n.files), Units: maps.Clone(n.units), Sysctls: maps.Clone(n.sysctls)}
}

// Commands returns the commands run on the node so far.
func (n *Node) Commands() [][]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.commands)
}

type cmd struct {
	node *Node
	// canceled is the command's context's Err: a command whose context ended does not run.
	canceled       func() error
	argv           []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (c *cmd) SetEnv(...string) exec.Cmd      { return c }
func (c *cmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *cmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *cmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }

func (c *cmd) fail(out string, err error) error {
	return &exec.RunError{Command: c.argv, Output: []byte(out), Inner: err}
}

func write(w io.Writer, s string) {
	if w != nil {
		_, _ = io.WriteString(w, s)
	}
}

func (c *cmd) Run() error {
	if err := c.canceled(); err != nil {
		return c.fail("", err)
	}
	n := c.node
	var in string
	if c.stdin != nil {
		b, err := io.ReadAll(c.stdin)
		if err != nil {
			return c.fail("", err)
		}
		in = string(b)
	}
	n.mu.Lock()
	n.commands = append(n.commands, slices.Clone(c.argv))
	out, code, hooks := n.run(c.argv, in)
	n.mu.Unlock()
	var hookErr error
	for _, h := range hooks {
		hookErr = errors.Join(hookErr, h())
	}
	if code != 0 {
		write(c.stderr, out)
		return c.fail(out, fmt.Errorf("exit status %d", code))
	}
	write(c.stdout, out)
	if hookErr != nil {
		return c.fail("", hookErr)
	}
	return nil
}

// run does argv with stdin in; it returns the output, the exit code, and what must be called once the node's
// lock is released (the API's side of a kubelet start, a helm release).
func (n *Node) run(argv []string, in string) (string, int, []func() error) {
	name, args := argv[0], argv[1:]
	switch name {
	case "sh":
		if len(args) >= 2 && args[0] == "-c" {
			var params []string
			if len(args) > 2 {
				params = args[3:]
			}
			return n.script(args[1], params, in)
		}
	case "cat":
		if len(args) == 1 {
			return n.cat(args[0])
		}
	case "rm":
		for _, p := range args {
			if p != "" && !strings.HasPrefix(p, "-") {
				n.removeAll(p)
			}
		}
		return "", 0, nil
	case "mv":
		if len(args) == 2 {
			if !n.exists(args[0]) {
				return "mv: cannot stat '" + args[0] + "': No such file or directory\n", 1, nil
			}
			n.copyTree(args[0], args[1])
			n.removeAll(args[0])
			return "", 0, nil
		}
	case "chmod":
		if len(args) == 2 {
			return n.chmod(args[0], args[1])
		}
	case "mkdir":
		if len(args) == 2 && args[0] == "-p" {
			n.mkdirAll(args[1])
			return "", 0, nil
		}
	case "ls":
		if len(args) == 2 && args[0] == "-1" {
			return n.ls(args[1])
		}
	case "systemctl":
		return n.systemctl(args)
	case "sysctl":
		return n.sysctl(args)
	case "kubeadm":
		return n.kubeadm(args)
	case "crictl":
		return n.crictl(args)
	}
	if f, ok := n.files[name]; ok && !f.Dir && f.Mode&0o111 != 0 {
		return n.program(name, args)
	}
	return fmt.Sprintf("fakecluster: %s cannot run %q\n", n.name, argv), 127, nil
}

// script does one of the shell scripts lab runs on nodes, recognised by what it says; params are its $1...
func (n *Node) script(s string, params []string, in string) (string, int, []func() error) {
	arg := func(i int) string {
		if i < len(params) {
			return params[i]
		}
		return ""
	}
	switch {
	case strings.Contains(s, "for u in "):
		return n.baselineRead(s), 0, nil
	case strings.Contains(s, "sha256sum") && strings.Contains(s, "absent $top"):
		return n.digest(arg(0)), 0, nil
	case strings.Contains(s, "lab-absent"):
		f, ok := n.files[arg(0)]
		if !ok {
			return "\x00lab-absent\x00", 0, nil
		}
		return f.Data, 0, nil
	case s == `mkdir -p "$1" && cp -a "$2" "$3"`:
		n.mkdirAll(arg(0))
		if !n.exists(arg(1)) {
			return "cp: cannot stat '" + arg(1) + "'\n", 1, nil
		}
		n.copyTree(arg(1), arg(2))
		return "", 0, nil
	case s == `mkdir -p "$(dirname "$1")" && cat > "$1"`:
		n.mkdirAll(path.Dir(arg(0)))
		n.writeKeepingMode(arg(0), in)
		return "", 0, nil
	case s == `cat > "$1" && chmod 0755 "$1"`:
		if !n.isDir(path.Dir(arg(0))) {
			return "sh: cannot create " + arg(0) + ": Directory nonexistent\n", 1, nil
		}
		n.files[arg(0)] = File{Data: in, Mode: 0o755}
		return "", 0, nil
	case strings.Contains(s, ".lab-restore"):
		// The revert's restore: a directory comes back whole, a file through a copy renamed into place.
		dst, backup := arg(0), arg(1)
		if !n.exists(backup) {
			return "cp: cannot stat '" + backup + "'\n", 1, nil
		}
		n.removeAll(dst)
		n.copyTree(backup, dst)
		return "", 0, nil
	case strings.Contains(s, `pgrep -xo "$1"`) && strings.Contains(s, `cp "/proc/$pid/root$2" "$2"`):
		if n.units["kubelet"] != "active" {
			return "", 1, nil
		}
		n.files[arg(1)] = File{Data: "program " + arg(1) + " of " + arg(0), Mode: 0o755}
		return "", 0, nil
	case strings.Contains(s, "snapshot save"):
		n.mkdirAll(path.Dir(arg(0)))
		n.files[arg(0)] = File{Data: "etcd snapshot of " + n.name, Mode: 0o600}
		return "Snapshot saved at " + arg(0) + "\n", 0, nil
	case strings.Contains(s, "cd /var/lib && for d in etcd*"):
		var out strings.Builder
		for _, p := range n.children("/var/lib") {
			if strings.HasPrefix(path.Base(p), "etcd") {
				out.WriteString(p + "\n")
			}
		}
		return out.String(), 0, nil
	case s == "test -s /etc/kubernetes/kubelet.conf && systemctl is-active -q kubelet":
		if f, ok := n.files["/etc/kubernetes/kubelet.conf"]; ok && f.Data != "" && n.units["kubelet"] == "active" {
			return "", 0, nil
		}
		return "", 1, nil
	case strings.Contains(s, "sed -n 's/^ *token: *//p'"):
		for _, l := range strings.Split(n.files[kindJoinConfig].Data, "\n") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(l), "token:"); ok {
				return strings.Trim(strings.TrimSpace(t), `"`) + "\n", 0, nil
			}
		}
		return "", 0, nil
	}
	return fmt.Sprintf("fakecluster: %s cannot run the script %q\n", n.name, s), 127, nil
}

// kindJoinConfig is where kind keeps a node's kubeadm join configuration.
const kindJoinConfig = "/kind/kubeadm.conf"

// joined are the files a node's join writes and kubeadm reset removes, as kubeadm manages them.
var joined = []string{"/etc/kubernetes/kubelet.conf", "/var/lib/kubelet/config.yaml", "/var/lib/kubelet/kubeadm-flags.env"}

// JoinedFile is the content a fake kubeadm join writes to one of the files it manages: a test seeds a joined
// node's files with it.
func JoinedFile(node, p string) string { return "written by kubeadm join on " + node + ": " + p + "\n" }

func (n *Node) kubeadm(args []string) (string, int, []func() error) {
	switch {
	case len(args) >= 1 && args[0] == "reset":
		for _, p := range joined {
			n.removeAll(p)
		}
		n.units["kubelet"] = "inactive"
		return "", 0, nil
	case len(args) >= 1 && args[0] == "join":
		for _, p := range joined {
			n.mkdirAll(path.Dir(p))
			n.files[p] = File{Data: JoinedFile(n.name, p), Mode: 0o644}
		}
		return "", 0, n.startUnit("kubelet")
	case len(args) >= 3 && args[0] == "token" && args[1] == "create":
		return args[2] + "\n", 0, nil
	}
	return "kubeadm: unknown command\n", 1, nil
}

func (n *Node) program(p string, args []string) (string, int, []func() error) {
	if len(args) > 0 && args[0] == "version" {
		return path.Base(p) + " v0.0.0-fake\n", 0, nil
	}
	if path.Base(p) == "helm" && n.Helm != nil {
		return "", 0, []func() error{func() error { return n.Helm(args) }}
	}
	return "", 0, nil
}

func (n *Node) cat(p string) (string, int, []func() error) {
	f, ok := n.files[p]
	if !ok {
		return "cat: " + p + ": No such file or directory\n", 1, nil
	}
	if f.Dir {
		return "cat: " + p + ": Is a directory\n", 1, nil
	}
	return f.Data, 0, nil
}

func (n *Node) chmod(mode, p string) (string, int, []func() error) {
	f, ok := n.files[p]
	if !ok {
		return "chmod: cannot access '" + p + "': No such file or directory\n", 1, nil
	}
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil {
		return "chmod: invalid mode: '" + mode + "'\n", 1, nil
	}
	f.Mode = fs.FileMode(m)
	n.files[p] = f
	return "", 0, nil
}

func (n *Node) ls(dir string) (string, int, []func() error) {
	if !n.isDir(dir) {
		return "ls: cannot access '" + dir + "': No such file or directory\n", 2, nil
	}
	var out strings.Builder
	for _, c := range n.children(dir) {
		out.WriteString(path.Base(c) + "\n")
	}
	return out.String(), 0, nil
}

func (n *Node) systemctl(args []string) (string, int, []func() error) {
	if len(args) < 2 {
		return "", 1, nil
	}
	verb, unit := args[0], args[len(args)-1]
	state, ok := n.units[unit]
	if !ok {
		state = "inactive"
	}
	switch verb {
	case "is-active":
		out := state + "\n"
		if args[1] == "-q" {
			out = ""
		}
		if state != "active" {
			return out, 3, nil
		}
		return out, 0, nil
	case "stop":
		n.units[unit] = "inactive"
		return "", 0, nil
	case "start", "restart":
		if !ok {
			return "Failed to " + verb + " " + unit + ": Unit not found.\n", 5, nil
		}
		if verb == "start" && state == "active" {
			return "", 0, nil
		}
		return "", 0, n.startUnit(unit)
	case "show":
		if len(args) >= 2 {
			t := n.started[args[1]]
			if t.IsZero() {
				return "\n", 0, nil
			}
			return fmt.Sprintf("@%d\n", t.Unix()), 0, nil
		}
	}
	return "systemctl: unknown command\n", 1, nil
}

func (n *Node) startUnit(unit string) []func() error {
	n.units[unit] = "active"
	n.started[unit] = time.Now()
	if unit == "kubelet" && n.KubeletStarted != nil {
		return []func() error{func() error { n.KubeletStarted(); return nil }}
	}
	return nil
}

func (n *Node) sysctl(args []string) (string, int, []func() error) {
	switch {
	case len(args) == 2 && args[0] == "-n":
		v, ok := n.sysctls[args[1]]
		if !ok {
			return "sysctl: cannot stat /proc/sys/" + strings.ReplaceAll(args[1], ".", "/") + ": No such file or directory\n", 255, nil
		}
		return v + "\n", 0, nil
	case len(args) == 2 && args[0] == "-qw":
		k, v, ok := strings.Cut(args[1], "=")
		if !ok {
			return "", 255, nil
		}
		if _, known := n.sysctls[k]; !known {
			return "", 255, nil
		}
		n.sysctls[k] = v
		return "", 0, nil
	}
	return "sysctl: unknown use\n", 255, nil
}

// crictl answers for the static Pods of /etc/kubernetes/manifests: the kubelet runs each manifest at once as a
// Pod whose UID is the manifest's hash, as a real kubelet's is, so a changed manifest means a new Pod. Every
// image is present on the node.
func (n *Node) crictl(args []string) (string, int, []func() error) {
	if len(args) >= 2 && args[0] == "--timeout" {
		args = args[2:]
	}
	if len(args) == 0 {
		return "", 1, nil
	}
	flag := func(name string) string {
		for i := 0; i+1 < len(args); i++ {
			if args[i] == name {
				return args[i+1]
			}
		}
		return ""
	}
	switch args[0] {
	case "inspecti":
		return `{"status":{"id":"sha256:fake"}}`, 0, nil
	case "stop":
		return "", 0, nil
	case "pods":
		component := strings.TrimPrefix(flag("--label"), "component=")
		var items []map[string]any
		if uid, ok := n.staticPodUID(component); ok {
			items = append(items, map[string]any{"id": "pod-" + uid, "labels": map[string]string{"io.kubernetes.pod.uid": uid, "component": component}})
		}
		b, _ := json.Marshal(map[string]any{"items": items})
		return string(b), 0, nil
	case "ps":
		if pod := flag("--pod"); pod != "" {
			return "ctr-" + strings.TrimPrefix(pod, "pod-") + "\n", 0, nil
		}
		component := strings.TrimSuffix(strings.TrimPrefix(flag("--name"), "^"), "$")
		var containers []map[string]any
		if uid, ok := n.staticPodUID(component); ok {
			containers = append(containers, map[string]any{"id": "ctr-" + uid, "labels": map[string]string{"io.kubernetes.pod.uid": uid}})
		}
		b, _ := json.Marshal(map[string]any{"containers": containers})
		return string(b), 0, nil
	}
	return "crictl: unknown command\n", 1, nil
}

// StaticPodUID is the UID of the static Pod the kubelet runs for component now; false when it runs none.
func (n *Node) StaticPodUID(component string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.staticPodUID(component)
}

func (n *Node) staticPodUID(component string) (string, bool) {
	f, ok := n.files["/etc/kubernetes/manifests/"+component+".yaml"]
	if !ok || n.units["kubelet"] != "active" {
		return "", false
	}
	h := sha256.Sum256([]byte(f.Data))
	return hex.EncodeToString(h[:8]), true
}

// baselineRead answers the baseline's node read: the hashes of the files it names that exist, then its units.
func (n *Node) baselineRead(s string) string {
	var out strings.Builder
	for _, p := range n.sortedPaths() {
		f := n.files[p]
		if f.Dir || !baselineFile(p) {
			continue
		}
		h := sha256.Sum256([]byte(f.Data))
		fmt.Fprintf(&out, "%s  %s\n", hex.EncodeToString(h[:]), p)
	}
	_, units, _ := strings.Cut(s, "for u in ")
	units, _, _ = strings.Cut(units, ";")
	for _, u := range strings.Fields(units) {
		state, ok := n.units[u]
		if !ok {
			state = "inactive"
		}
		fmt.Fprintf(&out, "unit %s %s\n", u, state)
	}
	return out.String()
}

func baselineFile(p string) bool {
	for _, dir := range []string{"/opt/cni/bin", "/etc/kubernetes/manifests", "/etc/cni/net.d"} {
		if path.Dir(p) == dir {
			return true
		}
	}
	return slices.Contains([]string{"/var/lib/kubelet/config.yaml", "/etc/kubernetes/kubelet.conf", "/etc/containerd/config.toml"}, p)
}

// digest prints what package node's FileDigest script prints: a file's or directory's SHA-256, or "absent"
// and the outermost missing directory.
func (n *Node) digest(p string) string {
	f, ok := n.files[p]
	if !ok {
		top := ""
		for d := path.Dir(p); !n.exists(d); d = path.Dir(d) {
			top = d
		}
		return "absent " + top + "\n"
	}
	h := sha256.New()
	if !f.Dir {
		fmt.Fprintf(h, "%o\n%s", f.Mode, f.Data)
	} else {
		for _, q := range n.sortedPaths() {
			if rel, ok := strings.CutPrefix(q, p+"/"); ok {
				e := n.files[q]
				fmt.Fprintf(h, "%s %o %t %d:%s\n", rel, e.Mode, e.Dir, len(e.Data), e.Data)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)) + "  " + p + "\n"
}

func (n *Node) exists(p string) bool { _, ok := n.files[p]; return ok }

func (n *Node) isDir(p string) bool { f, ok := n.files[p]; return ok && f.Dir }

func (n *Node) mkdirAll(p string) {
	for d := p; d != "/" && d != "."; d = path.Dir(d) {
		if _, ok := n.files[d]; !ok {
			n.files[d] = File{Dir: true, Mode: 0o755}
		}
	}
}

// writeKeepingMode replaces a file's content, keeping its mode as `cat >` does.
func (n *Node) writeKeepingMode(p, data string) {
	f, ok := n.files[p]
	if !ok {
		f = File{Mode: 0o644}
	}
	f.Data = data
	n.files[p] = f
}

func (n *Node) removeAll(p string) {
	delete(n.files, p)
	for q := range n.files {
		if strings.HasPrefix(q, p+"/") {
			delete(n.files, q)
		}
	}
}

// copyTree copies src to dst with its modes, as cp -a does.
func (n *Node) copyTree(src, dst string) {
	n.mkdirAll(path.Dir(dst))
	n.files[dst] = n.files[src]
	for q, f := range n.files {
		if rel, ok := strings.CutPrefix(q, src+"/"); ok {
			n.files[dst+"/"+rel] = f
		}
	}
}

func (n *Node) children(dir string) []string {
	var out []string
	for q := range n.files {
		if path.Dir(q) == dir && q != dir {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

func (n *Node) sortedPaths() []string {
	out := slices.Collect(maps.Keys(n.files))
	sort.Strings(out)
	return out
}

// Equal says where two states of a node differ, "" when they do not.
func (s State) Equal(o State) string {
	var b bytes.Buffer
	for _, p := range slices.Sorted(maps.Keys(s.Files)) {
		if g, ok := o.Files[p]; !ok {
			fmt.Fprintf(&b, "%s is gone; ", p)
		} else if g != s.Files[p] {
			fmt.Fprintf(&b, "%s changed (%q %o -> %q %o); ", p, s.Files[p].Data, s.Files[p].Mode, g.Data, g.Mode)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(o.Files)) {
		if _, ok := s.Files[p]; !ok {
			fmt.Fprintf(&b, "%s was added; ", p)
		}
	}
	if !maps.Equal(s.Units, o.Units) {
		fmt.Fprintf(&b, "units %v -> %v; ", s.Units, o.Units)
	}
	if !maps.Equal(s.Sysctls, o.Sysctls) {
		fmt.Fprintf(&b, "sysctls %v -> %v; ", s.Sysctls, o.Sysctls)
	}
	return b.String()
}
