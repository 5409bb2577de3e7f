// Package examhost prepares the hosts an exam's questions are solved on, as the CKA gives them since 2025:
// each question names a host, the candidate reaches it with `ssh <host>` from the exam's terminal and works
// there with that host's kubeconfig, kubectl and its `k` alias. Hosts share lab's cluster on a small machine,
// and a question that needs a cluster of its own has its host's kubeconfig point there; each host has its own
// client certificate, so the API server (and its audit log) knows which host every change came from.
package examhost

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cka-lab/lab/internal/pki"
)

// Group is the group each host's identity belongs to: kubeadm binds it to cluster-admin, as the exam's
// kubeconfigs are.
const Group = "kubeadm:cluster-admins"

// userPrefix starts every host's user name: candidate@cka1024.
const userPrefix = "candidate@"

// User is the user name the API server sees for requests from host.
func User(host string) string { return userPrefix + host }

// HostOf is the host a user name belongs to, "" when it is no host's.
func HostOf(user string) string {
	host, ok := strings.CutPrefix(user, userPrefix)
	if !ok {
		return ""
	}
	return host
}

// Names returns n distinct host names like the exam's (cka1024), drawn from seed so an exam's hosts are the
// same every time its record is read.
func Names(seed int64, n int) []string {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x686f7374))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		name := fmt.Sprintf("cka%04d", 1000+rng.IntN(9000))
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// Hosts are the prepared hosts of one exam, under Dir: bin/ssh (the exam's ssh), bashrc (the exam's
// terminal), and per host <host>/kubeconfig and <host>/bashrc.
type Hosts struct{ Dir string }

// ErrNoHost is a name that is not one of the exam's hosts.
var ErrNoHost = errors.New("no such exam host")

// Setup is how the hosts' ssh calls lab back.
type Setup struct {
	// Lab is the lab binary and Env the variables that point it at the exam's cluster (LAB_STATE_DIR,
	// LAB_CLUSTER).
	Lab string
	Env []string
	// Expires is when the hosts' credentials stop working: the exam's deadline, as the exam's access ends with
	// its time. A day from now when zero.
	Expires time.Time
}

// Host is one exam host and the cluster its kubeconfig reaches: that cluster's API server and CA.
type Host struct {
	Name   string
	Server string
	CA     *pki.CA
}

// HostEnv names the host a shell of the exam is on, so the exam's ssh reaches the nodes of that host's cluster.
const HostEnv = "LAB_EXAM_HOST"

// Prepare writes, for every host, a kubeconfig with the host's own identity (valid until s.Expires) and a
// shell profile, and the exam terminal with its ssh.
func (h Hosts) Prepare(ctx context.Context, s Setup, hosts []Host) error {
	if err := os.MkdirAll(filepath.Join(h.Dir, "bin"), 0o700); err != nil {
		return err
	}
	now := time.Now()
	expires := s.Expires
	if expires.IsZero() {
		expires = now.Add(24 * time.Hour)
	}
	var names []string
	for _, hh := range hosts {
		if err := ctx.Err(); err != nil {
			return err
		}
		host := hh.Name
		names = append(names, host)
		certPEM, keyPEM, err := pki.ClientCert(hh.CA, User(host), []string{Group}, now.Add(-time.Hour), expires)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(h.Dir, host), 0o700); err != nil {
			return err
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters[host] = &clientcmdapi.Cluster{Server: hh.Server, CertificateAuthorityData: hh.CA.PEM}
		cfg.AuthInfos[User(host)] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
		cfg.Contexts[host] = &clientcmdapi.Context{Cluster: host, AuthInfo: User(host), Namespace: "default"}
		cfg.CurrentContext = host
		if err := clientcmd.WriteToFile(*cfg, h.Kubeconfig(host)); err != nil {
			return fmt.Errorf("write host %s's kubeconfig: %w", host, err)
		}
		rc := profile(h.Dir, host, s) + "export KUBECONFIG=" + quote(h.Kubeconfig(host)) + " " + HostEnv + "=" + quote(host) + "\n"
		if err := os.WriteFile(h.rc(host), []byte(rc), 0o600); err != nil {
			return err
		}
	}
	ssh := "#!/bin/sh\n# The exam's ssh: one of the exam's hosts, or a node of the cluster.\n" + "exec " + s.lab("ssh") + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(h.Dir, "bin", "ssh"), []byte(ssh), 0o700); err != nil {
		return err
	}
	banner := "unset " + HostEnv + "\necho 'The exam terminal: ssh <host> to work on a question (" + strings.Join(names, ", ") + "), exit to come back.'\n"
	return os.WriteFile(h.rc(""), []byte(profile(h.Dir, "", s)+banner), 0o600)
}

// lab is the command line that runs lab with args for this cluster, whatever the shell's environment.
func (s Setup) lab(args ...string) string {
	return "env " + strings.Join(quoteAll(s.Env), " ") + " " + quote(s.Lab) + " " + strings.Join(args, " ")
}

// profile is the shell set-up every exam shell shares: the exam's ssh first on PATH, kubectl's `k` alias and
// completion for both, the proctor's time warnings before a prompt, and a prompt that names where the
// candidate is.
func profile(dir, host string, s Setup) string {
	where := host
	if where == "" {
		where = "terminal"
	}
	return strings.Join([]string{
		"[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc",
		"export PATH=" + quote(filepath.Join(dir, "bin")) + ":$PATH",
		"alias k=kubectl",
		"if command -v kubectl >/dev/null; then . <(kubectl completion bash); complete -o default -F __start_kubectl k; fi",
		"PROMPT_COMMAND=" + quote(s.lab("exam", "remind")),
		"PS1='candidate@" + where + `:\w$ '`,
	}, "\n") + "\n"
}

// Kubeconfig is host's kubeconfig.
func (h Hosts) Kubeconfig(host string) string { return filepath.Join(h.Dir, host, "kubeconfig") }

// rc is host's shell profile; the terminal's for "".
func (h Hosts) rc(host string) string { return filepath.Join(h.Dir, host, "bashrc") }

// Shell returns the command that opens host's shell (the terminal's for ""), and the command line to run
// there instead when command is not empty (the way ssh runs a remote command).
func (h Hosts) Shell(host string, command []string) (argv, env []string, err error) {
	if _, err := os.Stat(h.rc(host)); err != nil {
		if host == "" {
			return nil, nil, fmt.Errorf("the exam's terminal is not prepared: %w", err)
		}
		return nil, nil, fmt.Errorf("%w %q", ErrNoHost, host)
	}
	if len(command) == 0 {
		return []string{"bash", "--rcfile", h.rc(host), "-i"}, nil, nil
	}
	env = []string{"PATH=" + filepath.Join(h.Dir, "bin") + ":" + os.Getenv("PATH")}
	if host != "" {
		env = append(env, "KUBECONFIG="+h.Kubeconfig(host), HostEnv+"="+host)
	}
	return []string{"bash", "-c", strings.Join(command, " ")}, env, nil
}

// Remove deletes the hosts.
func (h Hosts) Remove() error { return os.RemoveAll(h.Dir) }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}
