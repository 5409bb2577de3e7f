package injector

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"path"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/internal/pki"
)

func init() {
	Register("userKubeconfig", userKubeconfig)
	Register("certificateExpiresSoon", certificateExpiresSoon)
}

// userKubeconfig writes a kubeconfig for a user with a client certificate onto a control-plane node, as an
// admin hands one out, broken in the way args.fault says:
//
//	node, path, user, cluster  where to write it, the user (certificate CN) and the kubeconfig's cluster name
//	group                      the certificate's organisation (a group), optional
//	fault                      "" (a working kubeconfig), "server" (the cluster's server has port badPort),
//	                           "context" (current-context names a stale cluster on badPort), "foreignCA" (the
//	                           certificate is signed by another CA) or "expired" (it expired yesterday)
func userKubeconfig(ctx context.Context, i *Injector, args map[string]string) error {
	for _, k := range []string{"node", "path", "user", "cluster"} {
		if args[k] == "" {
			return fmt.Errorf("userKubeconfig: arg %s is required", k)
		}
	}
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	caPEM, err := node.Run(ctx, n, "cat", pki.CACertPath)
	if err != nil {
		return fmt.Errorf("read the cluster CA: %w", err)
	}
	signer, err := caFor(ctx, i, args)
	if err != nil {
		return err
	}
	var groups []string
	if args["group"] != "" {
		groups = []string{args["group"]}
	}
	notBefore, notAfter := time.Now().Add(-time.Hour), time.Now().Add(365*24*time.Hour)
	if args["fault"] == "expired" {
		notBefore, notAfter = time.Now().Add(-30*24*time.Hour), time.Now().Add(-24*time.Hour)
	}
	certPEM, keyPEM, err := pki.ClientCert(signer, args["user"], groups, notBefore, notAfter)
	if err != nil {
		return err
	}
	cfg, err := kubeconfigFor(args, []byte(caPEM), certPEM, keyPEM)
	if err != nil {
		return err
	}
	if err := i.recordFile(ctx, n, args["path"]); err != nil {
		return err
	}
	if _, err := node.Run(ctx, n, "mkdir", "-p", path.Dir(args["path"])); err != nil {
		return err
	}
	if err := writeNodeFile(ctx, n, args["path"], string(cfg)); err != nil {
		return err
	}
	_, err = node.Run(ctx, n, "chmod", "600", args["path"])
	return err
}

// caFor returns the CA that signs the user's certificate: the cluster's own, or for fault foreignCA a new one
// that also calls itself "kubernetes", as a CA of another cluster does.
func caFor(ctx context.Context, i *Injector, args map[string]string) (*pki.CA, error) {
	if args["fault"] == "foreignCA" {
		return pki.NewCA("kubernetes", 365*24*time.Hour)
	}
	n, err := i.node(args["node"])
	if err != nil {
		return nil, err
	}
	return pki.ClusterCA(ctx, n)
}

// kubeconfigFor builds the user's kubeconfig: one cluster, one user, one context, plus what fault breaks.
func kubeconfigFor(args map[string]string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	user, cluster := args["user"], args["cluster"]
	server := "https://" + args["node"] + ":6443"
	if args["fault"] == "server" || args["fault"] == "context" {
		if args["badPort"] == "" {
			return nil, fmt.Errorf("userKubeconfig: fault %s needs arg badPort", args["fault"])
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	current := user + "@" + cluster
	cfg.Contexts[current] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user, Namespace: args["namespace"]}
	cfg.CurrentContext = current
	switch args["fault"] {
	case "server":
		cfg.Clusters[cluster].Server = "https://" + args["node"] + ":" + args["badPort"]
	case "context":
		// A context left over from a cluster that was decommissioned, still the current one.
		old := cluster + "-old"
		cfg.Clusters[old] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + args["badPort"], CertificateAuthorityData: caPEM}
		cfg.Contexts[user+"@"+old] = &clientcmdapi.Context{Cluster: old, AuthInfo: user, Namespace: args["namespace"]}
		cfg.CurrentContext = user + "@" + old
	case "", "foreignCA", "expired":
	default:
		return nil, fmt.Errorf("userKubeconfig: unknown fault %q (want server, context, foreignCA or expired)", args["fault"])
	}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig for %s: %w", user, err)
	}
	return b, nil
}

// certificateExpiresSoon re-issues a kubeadm certificate on a control-plane node (args node, and name: the file
// under /etc/kubernetes/pki without .crt) under the cluster CA with everything it had (subject, names, key,
// usages) but a validity that ends in args.days days, as a cluster nobody renewed for a year would have it.
// Components that reload their certificate from disk (the API server does, within a minute) serve it then.
func certificateExpiresSoon(ctx context.Context, i *Injector, args map[string]string) error {
	days, err := strconv.Atoi(args["days"])
	if err != nil || days < 1 {
		return fmt.Errorf("certificateExpiresSoon: days must be a whole number of days, got %q", args["days"])
	}
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	file := "/etc/kubernetes/pki/" + args["name"] + ".crt"
	certPEM, err := node.Run(ctx, n, "cat", file)
	if err != nil {
		return err
	}
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil {
		return fmt.Errorf("%s on %s holds no PEM certificate", file, n)
	}
	old, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return fmt.Errorf("parse %s: %w", file, err)
	}
	ca, err := caFor(ctx, i, map[string]string{"node": args["node"]})
	if err != nil {
		return err
	}
	certPEM, err = reissue(old, ca.Cert, ca.Key, time.Now().Add(time.Duration(days)*24*time.Hour))
	if err != nil {
		return fmt.Errorf("re-issue %s: %w", file, err)
	}
	// `kubeadm certs renew` writes a new key with the new certificate: reset must restore both, or the API
	// server would find its restored certificate paired with a key that is not its own.
	for _, f := range []string{file, strings.TrimSuffix(file, ".crt") + ".key"} {
		if err := i.recordFile(ctx, n, f); err != nil {
			return err
		}
	}
	return writeNodeFile(ctx, n, file, certPEM)
}

// reissue signs a copy of old, valid until notAfter, under ca. The parsed certificate is its own template:
// CreateCertificate ignores what it computes itself (the raw forms, the public key, the authority key id) and
// keeps the rest (subject, names, usages).
func reissue(old, ca *x509.Certificate, caKey crypto.Signer, notAfter time.Time) (string, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", err
	}
	tmpl := *old
	tmpl.SerialNumber = serial
	tmpl.NotBefore = notAfter.Add(-365 * 24 * time.Hour).Truncate(time.Second)
	tmpl.NotAfter = notAfter.Truncate(time.Second)
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca, old.PublicKey, caKey)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}
