// Package kube is lab's thin layer over client-go: clients for one kubeconfig, applying and deleting manifests
// of any kind, and waiting on the cluster with a deadline.
package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/manifest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// RequestTimeout bounds each API request lab makes, watches excepted.
const RequestTimeout = 30 * time.Second

// FieldManager names lab in managedFields, so a learner's `kubectl apply` never fights lab's.
const FieldManager = "lab"

// UserAgent names lab's own requests in the API server's audit log, so coaching (internal/coach) tells lab's
// writes (setup, faults, grading, reset) from the learner's kubectl.
const UserAgent = "cka-lab"

// Clients are the API clients of one cluster.
type Clients struct {
	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  meta.ResettableRESTMapper
}

// FromKubeconfig builds clients from a kubeconfig file, ignoring $KUBECONFIG and the current context of
// ~/.kube/config: lab only ever talks to the cluster whose file it names.
func FromKubeconfig(path string) (*Clients, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	return FromConfig(cfg)
}

// FromConfig builds clients for a rest.Config.
func FromConfig(cfg *rest.Config) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	// lab issues bursts of small requests (apply a scenario, read its state); the default 5 QPS throttles them.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = UserAgent
	// Warnings answer the requests lab makes of its own accord (emptying a namespace lists every kind, v1
	// Endpoints included): printed, they would tell a learner about APIs they never used.
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return requestTimeout{next: finalDrops{next: rt}, timeout: RequestTimeout}
	})
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &Clients{Config: cfg, Kube: kc, Dynamic: dc, Mapper: mapper}, nil
}

// mapping maps a kind to its resource, reading discovery again once when the kind is new (a CRD just made).
func (c *Clients) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	return m, nil
}

// Namespaced says whether objects of the kind live in a namespace.
func (c *Clients) Namespaced(gvk schema.GroupVersionKind) (bool, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// Resource returns the dynamic client for obj's kind, namespaced when the kind is.
func (c *Clients) Resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = metav1.NamespaceDefault
		}
		return c.Dynamic.Resource(m.Resource).Namespace(namespace), nil
	}
	return c.Dynamic.Resource(m.Resource), nil
}

// Apply server-side applies every object, in order.
func (c *Clients) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		ri, err := c.Resource(o.GroupVersionKind(), o.GetNamespace())
		if err != nil {
			return err
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), manifest.Name(o), err)
		}
	}
	return nil
}

// ApplyManifest decodes and applies a manifest.
func (c *Clients) ApplyManifest(ctx context.Context, data []byte) error {
	objs, err := manifest.Decode(data)
	if err != nil {
		return err
	}
	return c.Apply(ctx, objs)
}

// Delete deletes obj; a missing object is not an error.
func (c *Clients) Delete(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	if err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", obj.GetKind(), manifest.Name(obj), err)
	}
	return nil
}

// Get reads the live object named like obj; nil, nil when it does not exist.
func (c *Clients) Get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, err := c.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// WebhookNotCalled says whether the API server failed a request because it could not call an admission
// webhook (its Service not routing to a ready server yet, or no server at all), rather than on the webhook's
// answer.
func WebhookNotCalled(err error) bool {
	return err != nil && strings.Contains(err.Error(), "failed calling webhook")
}

// Poll calls cond every interval until it returns true, an error, or ctx (bounded by timeout) ends.
func Poll(ctx context.Context, interval, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, interval, timeout, true, cond)
}

// WaitReady waits up to timeout until the API server answers /readyz, each probe within 5 s: an API server
// that cannot reach etcd holds a request until its own, much longer, timeout.
func (c *Clients) WaitReady(ctx context.Context, timeout time.Duration) error {
	return Poll(ctx, time.Second, timeout, func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
}
