package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	kinderrors "sigs.k8s.io/kind/pkg/errors"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// writeTree makes a fake cgroup tree: each key is a file under root, each value its content.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for f, content := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// localShell runs a script as the node's (or a host view's) shell would.
func localShell(script string, args ...string) (string, error) {
	out, err := exec.CommandContext(context.Background(), "sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("sh: %s: %w", strings.TrimSpace(string(out)), err)
	}
	return string(out), nil
}

// The find and thaw scripts run in the node's shell; here they run in the test's against a fake tree.
func TestFindAndThawFrozen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "cgroup v1: the container frozen by itself, its parent only inheriting",
			files: map[string]string{
				"freezer.self_freezing":                           "1", // the node paused by Docker: not lab's to undo
				"freezer.state":                                   "FROZEN",
				"kubelet/freezer.self_freezing":                   "0",
				"kubelet/freezer.state":                           "THAWED",
				"kubelet/kubepods/pod1/abc/freezer.self_freezing": "1",
				"kubelet/kubepods/pod1/abc/freezer.state":         "FROZEN",
				"kubelet/kubepods/pod1/def/freezer.self_freezing": "0",
				"kubelet/kubepods/pod1/def/freezer.state":         "THAWED",
			},
			want: []string{"kubelet/kubepods/pod1/abc"},
		},
		{
			name: "cgroup v2",
			files: map[string]string{
				"cgroup.freeze":                          "0",
				"kubelet.slice/cgroup.freeze":            "0",
				"kubelet.slice/kubepods/x/cgroup.freeze": "1",
			},
			want: []string{"kubelet.slice/kubepods/x"},
		},
		{
			name: "cgroup v1 seen from inside the node: the freezer hierarchy alone, its root left out",
			files: map[string]string{
				"freezer/freezer.self_freezing":                           "1",
				"freezer/kubelet/kubepods/pod1/abc/freezer.state":         "FROZEN",
				"freezer/kubelet/kubepods/pod1/abc/freezer.self_freezing": "1",
				"cpu/kubelet/cgroup.freeze":                               "1", // no such file on v1; proves other hierarchies are not read
			},
			want: []string{"freezer/kubelet/kubepods/pod1/abc"},
		},
		{
			name:  "nothing frozen",
			files: map[string]string{"a/freezer.self_freezing": "0", "a/freezer.state": "THAWED"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			out, err := localShell(findFrozen, root)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range lines(out) {
				got = append(got, strings.TrimPrefix(d, root+"/"))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("found %q, want %q", got, tc.want)
			}
			if len(got) == 0 {
				return
			}
			dirs := lines(out)
			if _, err := localShell(thawFrozen, dirs...); err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				f, want := filepath.Join(d, "freezer.state"), "THAWED"
				if _, err := os.Stat(f); err != nil {
					f, want = filepath.Join(d, "cgroup.freeze"), "0"
				}
				if b, _ := os.ReadFile(f); strings.TrimSpace(string(b)) != want {
					t.Errorf("%s = %q after the thaw, want %s", f, b, want)
				}
			}
		})
	}
}

func TestCgroupDir(t *testing.T) {
	v1 := "6:freezer:/docker/1447c58c9e50\n4:memory:/docker/1447c58c9e50/init.scope\n0::/docker/1447c58c9e50/init.scope\n"
	if got, err := cgroupDir("/sys/fs/cgroup", v1); err != nil || got != "/sys/fs/cgroup/freezer/docker/1447c58c9e50" {
		t.Errorf("v1: %q, %v", got, err)
	}
	// A host view sees the host's tree under its own mount and names what it finds as the host does.
	if got, err := cgroupDir(hostCgroupMount, v1); err != nil || hostPath(got+"/kubepods/x") != "/sys/fs/cgroup/freezer/docker/1447c58c9e50/kubepods/x" {
		t.Errorf("host view: %q, %v", got, err)
	}
	v2 := "0::/system.slice/docker-1447c58c9e50.scope/init.scope\n"
	if got, err := cgroupDir("/sys/fs/cgroup", v2); err != nil || got != "/sys/fs/cgroup/system.slice/docker-1447c58c9e50.scope" {
		t.Errorf("v2: %q, %v", got, err)
	}
	if _, err := cgroupDir("/sys/fs/cgroup", "1:name=systemd:/x\n"); err == nil {
		t.Error("no freezer and no unified line must be an error")
	}
}

func TestParentsFirst(t *testing.T) {
	got := parentsFirst([]string{"/a/b/c", "/a", "/a/b", "/z"})
	if want := []string{"/a", "/z", "/a/b", "/a/b/c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestKillFailed(t *testing.T) {
	// kind wraps docker's failure and keeps docker's words out of the error's text.
	run := &kindexec.RunError{Command: []string{"docker", "rm", "-f", "-v", "lab-worker"},
		Output: []byte("Error response from daemon: cannot stop container: lab-worker: tried to kill container, but did not receive an exit event"),
		Inner:  errors.New("exit status 1")}
	if !killFailed(kinderrors.Wrap(run, "failed to delete nodes")) {
		t.Error("kind's wrapped docker failure must count as a failed kill")
	}
	if killFailed(errors.New("no such container")) || killFailed(nil) {
		t.Error("other failures are not a failed kill")
	}
}

func TestShortCgroup(t *testing.T) {
	got := shortCgroup("/sys/fs/cgroup/freezer/kubelet/kubepods/besteffort/podbd10d1ed-1459-4997-8ced-60551d7e697d/15ef337195702be3405bb3e46d7e552724be95f9e489651a7b3ef5298215cd89")
	if want := "kubepods/besteffort/podbd10d1ed-…/15ef33719570…"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
