package injector

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/cka-lab/lab/internal/pki"
)

func testCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("kubernetes", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestKubeconfigFor(t *testing.T) {
	caPEM := testCA(t).PEM
	base := map[string]string{"node": "lab-control-plane", "user": "ops-li", "cluster": "lab", "namespace": "ops", "badPort": "6444"}
	with := func(fault string) map[string]string {
		args := map[string]string{"fault": fault}
		for k, v := range base {
			args[k] = v
		}
		return args
	}
	for fault, wantServer := range map[string]string{
		"":        "https://lab-control-plane:6443",
		"expired": "https://lab-control-plane:6443",
		"server":  "https://lab-control-plane:6444",
		"context": "https://127.0.0.1:6444",
	} {
		b, err := kubeconfigFor(with(fault), caPEM, []byte("cert"), []byte("key"))
		if err != nil {
			t.Fatalf("fault %q: %v", fault, err)
		}
		cfg, err := clientcmd.Load(b)
		if err != nil {
			t.Fatalf("fault %q: %v", fault, err)
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		if got := cfg.Clusters[cur.Cluster].Server; got != wantServer {
			t.Errorf("fault %q: current context's server %s, want %s", fault, got, wantServer)
		}
		if cur.AuthInfo != "ops-li" || cur.Namespace != "ops" || string(cfg.AuthInfos["ops-li"].ClientCertificateData) != "cert" {
			t.Errorf("fault %q: context %+v", fault, cur)
		}
		if fault == "context" && cfg.Contexts["ops-li@lab"] == nil {
			t.Error("fault context: the working context ops-li@lab must still be there to switch to")
		}
	}
	if _, err := kubeconfigFor(with("nope"), caPEM, nil, nil); err == nil || !strings.Contains(err.Error(), "unknown fault") {
		t.Errorf("unknown fault: %v", err)
	}
	noPort := with("server")
	delete(noPort, "badPort")
	if _, err := kubeconfigFor(noPort, caPEM, nil, nil); err == nil {
		t.Error("fault server without badPort accepted")
	}
}

func TestReissueKeepsNamesUsagesAndKey(t *testing.T) {
	testca := testCA(t)
	ca, caKey := testca.Cert, testca.Key
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"kubernetes", "kubernetes.default.svc.cluster.local", "lab-control-plane"}, IPAddresses: []net.IP{net.ParseIP("10.96.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	old, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(3 * 24 * time.Hour)
	out, err := reissue(old, ca, caKey, until)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(out))
	got, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.DNSNames, old.DNSNames) || !got.IPAddresses[0].Equal(old.IPAddresses[0]) || got.Subject.CommonName != "kube-apiserver" ||
		!slices.Equal(got.ExtKeyUsage, old.ExtKeyUsage) || !key.PublicKey.Equal(got.PublicKey) {
		t.Errorf("re-issued certificate changed what it is for: %+v", got)
	}
	if got.SerialNumber.Cmp(old.SerialNumber) == 0 || !got.NotAfter.Equal(until.Truncate(time.Second)) || got.CheckSignatureFrom(ca) != nil {
		t.Errorf("re-issued certificate: serial %s, until %s, signature from the CA: %v", got.SerialNumber, got.NotAfter, got.CheckSignatureFrom(ca))
	}
}
