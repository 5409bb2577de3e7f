package injector

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/cka-lab/lab/injector/addons"
	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/scenarios"
)

func init() {
	Register("installGatewayController", installGatewayController)
	Register("tlsSecret", tlsSecret)
}

// installGatewayController installs the Gateway API's standard CRDs (v1.6.3) and Traefik as the controller of
// the GatewayClass traefik and the IngressClass traefik, and waits until Traefik runs and has accepted its
// GatewayClass. Everything is recorded like any applied manifest, so reset removes it, and the CRDs with every
// Gateway and route a scenario or a learner made.
func installGatewayController(ctx context.Context, i *Injector, _ map[string]string) error {
	bin, err := tools.Traefik()
	if err != nil {
		return err
	}
	image, err := i.componentImage(ctx, "traefik", bin, addons.TraefikImage, tools.TraefikEnv)
	if err != nil {
		return err
	}
	if err := i.apply(ctx, &scenarios.ApplyFault{Manifest: addons.GatewayAPICRDs()}); err != nil {
		return err
	}
	if err := i.apply(ctx, &scenarios.ApplyFault{Manifest: addons.Traefik(image), Ready: true}); err != nil {
		return err
	}
	return i.waitCondition(ctx, scenarios.ObjectRef{APIVersion: "gateway.networking.k8s.io/v1", Kind: "GatewayClass", Name: "traefik"}, "Accepted")
}

// tlsSecret creates the kubernetes.io/tls Secret args name in args namespace (one the scenario created) with a
// new self-signed certificate for args host, as a team's certificate for a site; its key exists nowhere else.
func tlsSecret(ctx context.Context, i *Injector, args map[string]string) error {
	ns, name, host := args["namespace"], args["name"], args["host"]
	if err := i.ownNamespace(ns, "TLS Secret"); err != nil {
		return err
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, nil, []string{host})
	if err != nil {
		return fmt.Errorf("certificate for %s: %w", host, err)
	}
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
	return i.applyTyped(ctx, s)
}
