package injector

import (
	"context"
	"fmt"
	"time"

	"github.com/cka-lab/lab/injector/addons"
	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/scenarios"
)

func init() {
	Register("installMetricsServer", installMetricsServer)
}

// installMetricsServer installs metrics-server (addons.MetricsServer) in kube-system and waits until the
// resource metrics API answers; with args kubeletInsecureTLS "false" as its release manifest has it, which cannot
// scrape a kind cluster's kubelets, and waits only for its Pod. Its objects are recorded like any applied
// manifest's, so reset removes them.
func installMetricsServer(ctx context.Context, i *Injector, args map[string]string) error {
	image, err := i.metricsServerImage(ctx)
	if err != nil {
		return err
	}
	insecure := args["kubeletInsecureTLS"] != "false"
	// The APIService goes last, once the Service routes to a Ready Pod (or, for the broken variant, has been
	// there for as long as the Pod took to be created): a connection the aggregator opens to a Service's IP
	// before the node routes it can stay pinned to wherever the packet went, and serve 404s for good.
	if err := i.apply(ctx, &scenarios.ApplyFault{Manifest: addons.MetricsServer(image, insecure), Ready: insecure, Wait: !insecure}); err != nil {
		return err
	}
	if err := i.apply(ctx, &scenarios.ApplyFault{Manifest: addons.MetricsAPIService}); err != nil {
		return err
	}
	if !insecure {
		return nil
	}
	var last error
	err = kube.Poll(ctx, 500*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
		_, last = i.env.Clients.Kube.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes").DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("metrics-server is Ready, and the resource metrics API does not answer: %v: %w", last, err)
	}
	return nil
}

// metricsServerImage loads metrics-server's image into the nodes.
func (i *Injector) metricsServerImage(ctx context.Context) (string, error) {
	bin, err := tools.MetricsServer()
	if err != nil {
		return "", err
	}
	return i.componentImage(ctx, "metrics-server", bin, addons.MetricsServerImage, tools.MetricsServerEnv)
}

// componentImage loads an add-on's image into the nodes: packed from the static binary bin when it is set (no
// registry needed: env names the variable that sets it, `make name` builds it), the upstream image otherwise.
func (i *Injector) componentImage(ctx context.Context, name, bin, upstream, env string) (string, error) {
	ns, err := i.env.Nodes()
	if err != nil {
		return "", err
	}
	if bin == "" {
		return upstream, images.LoadIntoNodes(ctx, ns, []string{upstream})
	}
	ref, err := images.BinaryTag("lab.local/"+name, bin)
	if err != nil {
		return "", err
	}
	return ref, images.EnsureBinary(ctx, ns, images.Binary{
		Path: bin, File: name, Ref: ref, Entrypoint: []string{"/" + name},
		What: name + " image", Rebuild: fmt.Sprintf("build it with `make %s` (CGO_ENABLED=0) and set %s", name, env),
	})
}
