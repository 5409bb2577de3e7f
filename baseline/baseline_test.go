package baseline

import "testing"

func TestDiffIgnoresCleanedUpCSRs(t *testing.T) {
	csr := func(name string) Object {
		return Object{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Name: name}
	}
	base := &Snapshot{Objects: map[string]Object{csr("csr-kubelet").key(): csr("csr-kubelet")}}
	live := &Snapshot{Objects: map[string]Object{csr("dev-anna").key(): csr("dev-anna")}}
	got := Diff(base, live)
	if len(got) != 1 || got[0].What != "extra" || got[0].Target != "CertificateSigningRequest dev-anna" {
		t.Errorf("Diff = %v, want only the extra CSR dev-anna (a kubelet CSR the controller-manager cleaned up is no residue)", got)
	}
}
