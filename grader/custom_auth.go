package grader

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/internal/pki"
)

func init() {
	Register("clusterCAUnchanged", clusterCAUnchanged)
	Register("kubeconfigCertFromCSR", kubeconfigCertFromCSR)
}

func (e Env) nodeNamed(name string) (nodes.Node, error) { return node.Find(e.Nodes, name) }

// clusterCAUnchanged: the cluster CA on args.node is still the one lab's kubeconfig trusts. Re-running kubeadm's
// certificate phases, or copying another CA over it, would make every issued credential worthless.
func clusterCAUnchanged(ctx context.Context, e Env, args map[string]string) Result {
	n, err := e.nodeNamed(args["node"])
	if err != nil {
		return e.fail("%v", err)
	}
	out, err := node.Run(ctx, n, "cat", pki.CACertPath)
	if err != nil {
		return e.fail("read %s on %s: %v", pki.CACertPath, n, err)
	}
	if !bytes.Equal(bytes.TrimSpace([]byte(out)), bytes.TrimSpace(e.Clients.Config.CAData)) {
		return Result{Evidence: fmt.Sprintf("%s on %s is not the cluster's CA any more: every kubeconfig and certificate issued under it stops working", pki.CACertPath, n), Stage: journey.Authentication}
	}
	return pass("%s on %s is the cluster CA it was", pki.CACertPath, n)
}

// kubeconfigCertFromCSR: the client certificate the current context of the kubeconfig args.path on args.node
// uses is the one the CertificateSigningRequest args.csr issued, so it went through the cluster's approval.
func kubeconfigCertFromCSR(ctx context.Context, e Env, args map[string]string) Result {
	n, err := e.nodeNamed(args["node"])
	if err != nil {
		return e.fail("%v", err)
	}
	csr, err := e.Clients.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, args["csr"], metav1.GetOptions{})
	if err != nil {
		return Result{Evidence: fmt.Sprintf("CertificateSigningRequest %s: %v", args["csr"], err), Stage: journey.Authentication}
	}
	issued := firstCert(csr.Status.Certificate)
	if issued == nil {
		return Result{Evidence: fmt.Sprintf("CertificateSigningRequest %s has not issued a certificate (approve it: kubectl certificate approve %s)", csr.Name, csr.Name), Stage: journey.Authentication}
	}
	raw, err := node.Run(ctx, n, "cat", args["path"])
	if err != nil {
		return e.fail("read %s on %s: %v", args["path"], n, err)
	}
	cfg, err := clientcmd.Load([]byte(raw))
	if err != nil {
		return e.fail("%s on %s is not a kubeconfig: %v", args["path"], n, err)
	}
	kc, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.AuthInfos[kc.AuthInfo] == nil {
		return e.fail("%s on %s: current-context %q names no user", args["path"], n, cfg.CurrentContext)
	}
	user := cfg.AuthInfos[kc.AuthInfo]
	certPEM := user.ClientCertificateData
	if len(certPEM) == 0 && user.ClientCertificate != "" {
		file := user.ClientCertificate
		if !path.IsAbs(file) {
			file = path.Join(path.Dir(args["path"]), file)
		}
		out, err := node.Run(ctx, n, "cat", file)
		if err != nil {
			return e.fail("read the client certificate %s on %s: %v", file, n, err)
		}
		certPEM = []byte(out)
	}
	used := firstCert(certPEM)
	if used == nil {
		return Result{Evidence: fmt.Sprintf("user %s in %s has no client certificate", kc.AuthInfo, args["path"]), Stage: journey.Authentication}
	}
	if !used.Equal(issued) {
		return Result{Evidence: fmt.Sprintf("user %s in %s uses a certificate for %q issued by %q, not the one CertificateSigningRequest %s issued",
			kc.AuthInfo, args["path"], used.Subject.CommonName, used.Issuer.CommonName, csr.Name), Stage: journey.Authentication}
	}
	return pass("user %s in %s uses the certificate CertificateSigningRequest %s issued (CN=%s, until %s)",
		kc.AuthInfo, args["path"], csr.Name, used.Subject.CommonName, used.NotAfter.UTC().Format("2006-01-02 15:04 UTC"))
}

func firstCert(pemData []byte) *x509.Certificate {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	return c
}
