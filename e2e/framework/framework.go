// Package framework drives the built lab binary, kubectl and shell steps against a real kind cluster for the
// e2e suite, with gomega helpers, in the manner of cluster-api's test framework.
package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Lab is the lab binary under test with the environment every invocation gets.
type Lab struct {
	Bin      string
	Cluster  string
	StateDir string
	// PathDirs are prepended to PATH for shell steps (lab's and kubectl's directories).
	PathDirs []string
	Env      []string
}

// Result is one finished command.
type Result struct {
	Stdout, Stderr string
	Code           int
	Took           time.Duration
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.Code, r.Took.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// Build compiles lab statically (the webhook image is this binary) into dir.
func Build(dir string) string {
	bin := filepath.Join(dir, "lab")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w", "-o", bin, "./cmd/lab")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	return bin
}

// RepoRoot is the module root (e2e runs from its own directory).
func RepoRoot() string {
	wd, err := os.Getwd()
	Expect(err).NotTo(HaveOccurred())
	for d := wd; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	Fail("no go.mod above " + wd)
	return ""
}

func (l *Lab) environ(extra []string) []string {
	env := append(os.Environ(), "LAB_STATE_DIR="+l.StateDir, "LAB_CLUSTER="+l.Cluster, "NO_COLOR=1", "KUBECONFIG="+l.Kubeconfig())
	path := strings.Join(append(append([]string{}, l.PathDirs...), os.Getenv("PATH")), ":")
	env = append(env, "PATH="+path)
	env = append(env, l.Env...)
	return append(env, extra...)
}

// Kubeconfig is the lab cluster's kubeconfig file.
func (l *Lab) Kubeconfig() string {
	return filepath.Join(l.StateDir, "clusters", l.Cluster, "kubeconfig")
}

// Run runs lab with args and returns its result, whatever the exit code.
func (l *Lab) Run(ctx context.Context, args ...string) Result {
	return l.RunEnv(ctx, nil, args...)
}

// RunEnv runs lab with extra environment variables.
func (l *Lab) RunEnv(ctx context.Context, extra []string, args ...string) Result {
	return run(l.Command(ctx, extra, args...))
}

// Command prepares a lab command (for callers that set process attributes).
func (l *Lab) Command(ctx context.Context, extra []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, l.Bin, args...)
	cmd.Env = l.environ(extra)
	return cmd
}

// RunCmd runs a prepared command.
func RunCmd(cmd *exec.Cmd) Result { return run(cmd) }

// Shell runs one step of a solution or wrong fix as a learner would type it, with lab and kubectl on PATH.
func (l *Lab) Shell(ctx context.Context, step string) Result {
	cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", step)
	cmd.Env = l.environ(nil)
	return run(cmd)
}

func run(cmd *exec.Cmd) Result {
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	addChildCPU(cmd)
	r := Result{Stdout: out.String(), Stderr: errOut.String(), Took: time.Since(start)}
	if err != nil {
		r.Code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		}
	}
	return r
}

// MustRun runs lab and expects exit 0.
func (l *Lab) MustRun(ctx context.Context, args ...string) Result {
	GinkgoHelper()
	r := l.Run(ctx, args...)
	Expect(r.Code).To(Equal(0), "lab %s\n%s", strings.Join(args, " "), r)
	return r
}

// JSON decodes a command's stdout.
func JSON[T any](r Result) T {
	GinkgoHelper()
	var v T
	Expect(json.Unmarshal([]byte(r.Stdout), &v)).To(Succeed(), "decode JSON from:\n%s", r)
	return v
}

// Kubectl returns the kubectl to use: $KUBECTL, kubectl on PATH, or the one the offline image build made.
func Kubectl() string {
	if k := os.Getenv("KUBECTL"); k != "" {
		return k
	}
	if k, err := exec.LookPath("kubectl"); err == nil {
		return k
	}
	matches, _ := filepath.Glob("/var/cache/kind-offline/out/k8s-*/kubectl")
	if len(matches) > 0 {
		return matches[len(matches)-1]
	}
	return ""
}
