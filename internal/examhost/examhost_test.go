package examhost

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/cka-lab/lab/internal/pki"
)

func TestNames(t *testing.T) {
	a, b := Names(7, 16), Names(7, 16)
	if !slices.Equal(a, b) {
		t.Errorf("Names(7, 16) differs between calls: %v, %v", a, b)
	}
	seen := map[string]bool{}
	for _, n := range a {
		if len(n) != 7 || !strings.HasPrefix(n, "cka") || seen[n] {
			t.Errorf("host %q: want cka and four digits, each once (%v)", n, a)
		}
		seen[n] = true
	}
	if slices.Equal(Names(8, 16), a) {
		t.Error("another seed gave the same hosts")
	}
}

func TestUser(t *testing.T) {
	if got := HostOf(User("cka1024")); got != "cka1024" {
		t.Errorf("HostOf(User(cka1024)) = %q", got)
	}
	for _, u := range []string{"kubernetes-admin", "system:admin", "cka1024"} {
		if got := HostOf(u); got != "" {
			t.Errorf("HostOf(%q) = %q, want no host", u, got)
		}
	}
}

func testCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("kubernetes", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestPrepare(t *testing.T) {
	h := Hosts{Dir: filepath.Join(t.TempDir(), "exam-hosts")}
	deadline := time.Now().Add(30 * time.Minute).Truncate(time.Second)
	setup := Setup{Lab: "/opt/lab's/lab", Env: []string{"LAB_CLUSTER=lab"}, Expires: deadline}
	// cka2048's question has a cluster of its own.
	hosts := []Host{{Name: "cka1024", Server: "https://127.0.0.1:40000", CA: testCA(t)}, {Name: "cka2048", Server: "https://127.0.0.1:40001", CA: testCA(t)}}
	if err := h.Prepare(context.Background(), setup, hosts); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(h.Kubeconfig("cka2048"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if cfg.CurrentContext != "cka2048" || ctx == nil || cfg.Clusters[ctx.Cluster].Server != hosts[1].Server ||
		!slices.Equal(cfg.Clusters[ctx.Cluster].CertificateAuthorityData, hosts[1].CA.PEM) {
		t.Fatalf("kubeconfig: current context %q, %+v, want host cka2048's cluster", cfg.CurrentContext, ctx)
	}
	block, _ := pem.Decode(cfg.AuthInfos[ctx.AuthInfo].ClientCertificateData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "candidate@cka2048" || !slices.Equal(cert.Subject.Organization, []string{Group}) {
		t.Errorf("host identity %v, want candidate@cka2048 in %s", cert.Subject, Group)
	}
	if !cert.NotAfter.Equal(deadline) {
		t.Errorf("host identity valid until %s, want the exam's deadline %s", cert.NotAfter, deadline)
	}
	ssh, err := os.ReadFile(filepath.Join(h.Dir, "bin", "ssh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ssh), `'/opt/lab'\''s/lab' ssh "$@"`) || !strings.Contains(string(ssh), "'LAB_CLUSTER=lab'") {
		t.Errorf("ssh calls lab back wrongly:\n%s", ssh)
	}

	argv, env, err := h.Shell("cka1024", []string{"kubectl", "get", "pods"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(argv, []string{"bash", "-c", "kubectl get pods"}) || !slices.Contains(env, "KUBECONFIG="+h.Kubeconfig("cka1024")) ||
		!slices.Contains(env, HostEnv+"=cka1024") {
		t.Errorf("a host's command: %v %v", argv, env)
	}
	if argv, _, err = h.Shell("", nil); err != nil || argv[len(argv)-1] != "-i" {
		t.Errorf("the terminal: %v %v", argv, err)
	}
	if _, _, err := h.Shell("cka9999", nil); !errors.Is(err, ErrNoHost) {
		t.Errorf("an unknown host: %v, want ErrNoHost", err)
	}
	if err := h.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Shell("cka1024", nil); !errors.Is(err, ErrNoHost) {
		t.Errorf("a removed host: %v, want ErrNoHost", err)
	}
}
