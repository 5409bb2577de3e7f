// Package fakecluster is a lab cluster in memory for unit tests: client-go's fake clientset and dynamic client
// over one store, with the few controllers lab's waits rely on, and kind nodes whose commands act on an
// in-memory filesystem, systemd units, kernel parameters and static Pods, so the injector's and the session's
// tests prove in seconds, without Docker, that reset restores what a fault changed.
package fakecluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kfake "k8s.io/client-go/kubernetes/fake"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restfake "k8s.io/client-go/rest/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/cka-lab/lab/internal/kube"
)

// Kinds a kind cluster serves beyond client-go's scheme: stored as unstructured objects by the dynamic client.
var (
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// API is a fake API server. Built-in kinds live in the typed clientset's store whichever client writes them
// (the injector reads a Node with one and records it with the other); the kinds client-go does not know (CRDs,
// APIServices, custom resources) live in the dynamic client's. Its controllers do only what lab waits for: a
// workload's replicas are Ready once written, a namespace's objects go with it, the scheduler turns a probe
// Pod away, a CRD is Established and a GatewayClass Accepted.
type API struct {
	Clients *kube.Clients
	Typed   *kfake.Clientset
	Dynamic *dynamicfake.FakeDynamicClient

	scheme *runtime.Scheme
	mapper *mapper

	mu    sync.Mutex
	seen  map[schema.GroupVersionResource]bool
	names int
}

// NewAPI returns an API holding objs (typed objects of client-go's scheme).
func NewAPI(objs ...runtime.Object) *API {
	s := runtime.NewScheme()
	if err := kscheme.AddToScheme(s); err != nil {
		panic(fmt.Sprintf("fakecluster: scheme: %v", err))
	}
	api := &API{
		Typed:  kfake.NewClientset(),
		scheme: s,
		mapper: newMapper(),
		seen:   map[schema.GroupVersionResource]bool{},
	}
	api.Dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(s, map[schema.GroupVersionResource]string{
		crds: "CustomResourceDefinitionList", apiServices: "APIServiceList",
		// Gateway API's kinds, which the baseline lists where a cluster serves them.
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}: "GatewayClassList",
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}:       "GatewayList",
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}:     "HTTPRouteList",
	})
	api.Typed.PrependReactor("*", "*", api.serveTyped)
	api.Dynamic.PrependReactor("*", "*", api.serveDynamic)
	for _, o := range objs {
		gvk, err := objectKind(o)
		if err != nil {
			panic(err)
		}
		m, err := api.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			panic(err)
		}
		api.saw(m.Resource)
		if err := api.Typed.Tracker().Add(o); err != nil {
			panic(err)
		}
	}
	ok := restfake.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader("ok"))}, nil
	})
	disc := &answering{
		FakeDiscovery: api.Typed.Discovery().(*fakediscovery.FakeDiscovery),
		rest:          &restfake.RESTClient{NegotiatedSerializer: kscheme.Codecs.WithoutConversion(), Client: ok},
	}
	api.Clients = &kube.Clients{Config: &rest.Config{Host: "https://fake"}, Kube: &clientset{Clientset: api.Typed, disc: disc}, Dynamic: api.Dynamic, Mapper: api.mapper}
	return api
}

// clientset is the fake clientset with a discovery client whose raw requests (/readyz, an aggregated API's
// path) are answered with 200, as a healthy API server answers them.
type clientset struct {
	*kfake.Clientset
	disc *answering
}

func (c *clientset) Discovery() discovery.DiscoveryInterface { return c.disc }

type answering struct {
	*fakediscovery.FakeDiscovery
	rest rest.Interface
}

func (a *answering) RESTClient() rest.Interface { return a.rest }

func objectKind(o runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := o.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk, nil
	}
	gvks, _, err := kscheme.Scheme.ObjectKinds(o)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("fakecluster: kind of %T: %w", o, err)
	}
	return gvks[0], nil
}

func (api *API) saw(gvr schema.GroupVersionResource) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.seen[gvr] = true
}

func (api *API) resources() []schema.GroupVersionResource {
	api.mu.Lock()
	defer api.mu.Unlock()
	out := make([]schema.GroupVersionResource, 0, len(api.seen))
	for r := range api.seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// typed says whether gvr is a kind of client-go's scheme, kept in the typed store.
func (api *API) typed(gvr schema.GroupVersionResource) bool {
	gvk, err := api.mapper.KindFor(gvr)
	return err == nil && kscheme.Scheme.Recognizes(gvk)
}

// serveDynamic sends the dynamic client's requests for built-in kinds, as typed objects, through the typed
// clientset, so both clients see one store.
func (api *API) serveDynamic(a clienttesting.Action) (bool, runtime.Object, error) {
	gvr := a.GetResource()
	if !api.typed(gvr) {
		return api.serveUntyped(a)
	}
	switch act := a.(type) {
	case clienttesting.CreateActionImpl:
		obj, err := toTyped(act.Object)
		if err != nil {
			return true, nil, err
		}
		act.Object = obj
		a = act
	case clienttesting.UpdateActionImpl:
		obj, err := toTyped(act.Object)
		if err != nil {
			return true, nil, err
		}
		act.Object = obj
		a = act
	}
	obj, err := api.Typed.Invokes(a, nil)
	return true, obj, err
}

func toTyped(o runtime.Object) (runtime.Object, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return o, nil
	}
	obj, err := kscheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// serveTyped is the API server for built-in kinds: client-go's object tracker, plus dry runs, generated names,
// deletes by collection, a namespace's deletion and the controllers.
func (api *API) serveTyped(a clienttesting.Action) (bool, runtime.Object, error) {
	tracker := api.Typed.Tracker()
	react := clienttesting.ObjectReaction(tracker)
	gvr := a.GetResource()
	switch act := a.(type) {
	case clienttesting.CreateActionImpl:
		if len(act.CreateOptions.DryRun) > 0 {
			return true, act.Object, nil
		}
		if err := api.generateName(act.Object); err != nil {
			return true, nil, err
		}
		api.saw(gvr)
		_, obj, err := react(act)
		if err != nil {
			return true, nil, err
		}
		return true, api.reconcile(gvr, obj), nil
	case clienttesting.UpdateActionImpl, clienttesting.PatchActionImpl:
		api.saw(gvr)
		_, obj, err := react(a)
		if err != nil {
			return true, nil, err
		}
		return true, api.reconcile(gvr, obj), nil
	case clienttesting.DeleteActionImpl:
		if _, obj, err := react(act); err != nil {
			return true, obj, err
		}
		if gvr.Resource == "namespaces" && gvr.Group == "" {
			return true, nil, api.emptyNamespace(act.Name)
		}
		return true, nil, nil
	case clienttesting.DeleteCollectionActionImpl:
		return true, nil, api.deleteCollection(gvr, act.Namespace, act.ListRestrictions.Labels)
	}
	return react(a)
}

func (api *API) generateName(o runtime.Object) error {
	m, err := meta.Accessor(o)
	if err != nil {
		return err
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		api.mu.Lock()
		api.names++
		m.SetName(fmt.Sprintf("%s%05d", m.GetGenerateName(), api.names))
		api.mu.Unlock()
	}
	return nil
}

// reconcile does at once what a controller would soon do after a write, and returns the object as it is then.
func (api *API) reconcile(gvr schema.GroupVersionResource, obj runtime.Object) runtime.Object {
	changed := true
	switch o := obj.(type) {
	case *appsv1.Deployment:
		n := replicas(o.Spec.Replicas)
		o.Status = appsv1.DeploymentStatus{ObservedGeneration: o.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	case *appsv1.StatefulSet:
		n := replicas(o.Spec.Replicas)
		o.Status = appsv1.StatefulSetStatus{ObservedGeneration: o.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	case *appsv1.DaemonSet:
		o.Status = appsv1.DaemonSetStatus{ObservedGeneration: o.Generation, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1, UpdatedNumberScheduled: 1, NumberReady: 1, NumberAvailable: 1}
	case *corev1.ResourceQuota:
		used := corev1.ResourceList{}
		for r := range o.Spec.Hard {
			used[r] = resource.Quantity{}
		}
		o.Status = corev1.ResourceQuotaStatus{Hard: o.Spec.Hard, Used: used}
	case *corev1.Pod:
		// The scheduler turns away the injector's probe Pods: every node it may take is tainted or cordoned.
		if !strings.HasPrefix(o.Name, "lab-scheduler-probe-") {
			return obj
		}
		o.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	default:
		changed = false
	}
	if !changed {
		return obj
	}
	m, _ := meta.Accessor(obj)
	if err := api.Typed.Tracker().Update(gvr, obj, m.GetNamespace()); err != nil {
		panic(fmt.Sprintf("fakecluster: controller update of %s %s: %v", gvr.Resource, m.GetName(), err))
	}
	return obj
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// emptyNamespace deletes every object in a deleted namespace, as the namespace controller does.
func (api *API) emptyNamespace(ns string) error {
	for _, gvr := range api.resources() {
		if err := api.deleteCollection(gvr, ns, labels.Everything()); err != nil {
			return err
		}
	}
	return nil
}

// deleteCollection deletes the objects of gvr in ns (all namespaces: "") that sel selects.
func (api *API) deleteCollection(gvr schema.GroupVersionResource, ns string, sel labels.Selector) error {
	objs, err := api.list(gvr, ns)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if sel != nil && !sel.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		if o.GetNamespace() == "" && ns != "" {
			continue
		}
		if err := api.tracker(gvr).Delete(gvr, o.GetNamespace(), o.GetName()); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (api *API) tracker(gvr schema.GroupVersionResource) clienttesting.ObjectTracker {
	if api.typed(gvr) {
		return api.Typed.Tracker()
	}
	return api.Dynamic.Tracker()
}

// list reads the objects of gvr in ns from its store, as unstructured objects.
func (api *API) list(gvr schema.GroupVersionResource, ns string) ([]unstructured.Unstructured, error) {
	gvk, err := api.mapper.KindFor(gvr)
	if err != nil {
		return nil, err
	}
	l, err := api.tracker(gvr).List(gvr, gvk, ns)
	if err != nil {
		return nil, fmt.Errorf("fakecluster: list %s: %w", gvr, err)
	}
	items, err := meta.ExtractList(l)
	if err != nil {
		return nil, err
	}
	out := make([]unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(it)
		if err != nil {
			return nil, err
		}
		u := unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvk)
		out = append(out, u)
	}
	return out, nil
}

// serveUntyped is the API server for kinds client-go does not know: server-side apply creates or merges, a
// CRD's deletion takes its objects with it, and the controllers set the conditions lab waits for.
func (api *API) serveUntyped(a clienttesting.Action) (bool, runtime.Object, error) {
	tracker := api.Dynamic.Tracker()
	gvr := a.GetResource()
	ns := a.GetNamespace()
	switch act := a.(type) {
	case clienttesting.PatchActionImpl:
		if act.PatchType != types.ApplyPatchType {
			return false, nil, nil
		}
		api.saw(gvr)
		applied := &unstructured.Unstructured{}
		if err := json.Unmarshal(act.Patch, &applied.Object); err != nil {
			return true, nil, err
		}
		applied.SetName(act.Name)
		live, err := tracker.Get(gvr, ns, act.Name)
		switch {
		case apierrors.IsNotFound(err):
			err = tracker.Create(gvr, applied, ns)
		case err == nil:
			merged := live.(*unstructured.Unstructured).DeepCopy()
			for k, v := range applied.Object {
				merged.Object[k] = v
			}
			err = tracker.Update(gvr, merged, ns)
		}
		if err != nil {
			return true, nil, err
		}
		return true, api.reconcileUntyped(gvr, ns, act.Name), nil
	case clienttesting.CreateActionImpl:
		api.saw(gvr)
		if err := tracker.Create(gvr, act.Object, ns); err != nil {
			return true, nil, err
		}
		m, _ := meta.Accessor(act.Object)
		return true, api.reconcileUntyped(gvr, ns, m.GetName()), nil
	case clienttesting.UpdateActionImpl:
		if err := tracker.Update(gvr, act.Object, ns); err != nil {
			return true, nil, err
		}
		m, _ := meta.Accessor(act.Object)
		return true, api.reconcileUntyped(gvr, ns, m.GetName()), nil
	case clienttesting.DeleteActionImpl:
		if gvr == crds {
			if err := api.dropCRD(act.Name); err != nil {
				return true, nil, err
			}
		}
		return true, nil, tracker.Delete(gvr, ns, act.Name)
	}
	return false, nil, nil
}

func (api *API) reconcileUntyped(gvr schema.GroupVersionResource, ns, name string) runtime.Object {
	tracker := api.Dynamic.Tracker()
	obj, err := tracker.Get(gvr, ns, name)
	if err != nil {
		panic(fmt.Sprintf("fakecluster: read back %s %s: %v", gvr.Resource, name, err))
	}
	u := obj.(*unstructured.Unstructured)
	var condition string
	switch {
	case gvr == crds:
		api.serveCRD(u)
		condition = "Established"
	case gvr.Group == "gateway.networking.k8s.io" && gvr.Resource == "gatewayclasses":
		condition = "Accepted"
	default:
		return u
	}
	conds := []any{map[string]any{"type": condition, "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}
	if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
		panic(err)
	}
	if err := tracker.Update(gvr, u, ns); err != nil {
		panic(fmt.Sprintf("fakecluster: controller update of %s %s: %v", gvr.Resource, name, err))
	}
	return u
}

// serveCRD makes the CRD's served versions known to the mapper and the store, as the API server serves them.
func (api *API) serveCRD(crd *unstructured.Unstructured) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		name, _, _ := unstructured.NestedString(v.(map[string]any), "name")
		gvk := schema.GroupVersionKind{Group: group, Version: name, Kind: kind}
		api.mapper.add(gvk, plural, scope == "Namespaced")
		list := gvk
		list.Kind += "List"
		if !api.scheme.Recognizes(list) {
			api.scheme.AddKnownTypeWithName(list, &unstructured.UnstructuredList{})
		}
	}
}

// dropCRD deletes every object of the CRD's resource, as the API server does when its CRD goes.
func (api *API) dropCRD(name string) error {
	crd, err := api.Dynamic.Tracker().Get(crds, "", name)
	if err != nil {
		return nil //nolint:nilerr // a CRD that is not there has no objects to drop; the delete reports it
	}
	u := crd.(*unstructured.Unstructured)
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
	for _, gvr := range api.resources() {
		if gvr.Group == group && gvr.Resource == plural {
			if err := api.deleteCollection(gvr, "", nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// RenewLease renews the node's lease in kube-node-lease now, as its kubelet does when it starts.
func (api *API) RenewLease(node string) error {
	leases := api.Typed.Tracker()
	gvr := coordinationv1.SchemeGroupVersion.WithResource("leases")
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease}, Spec: coordinationv1.LeaseSpec{RenewTime: &now}}
	api.saw(gvr)
	if err := leases.Update(gvr, l, l.Namespace); apierrors.IsNotFound(err) {
		return leases.Create(gvr, l, l.Namespace)
	} else if err != nil {
		return err
	}
	return nil
}

// volatile are what the API server and the controllers write, not what a fault or a reset does: a reset that
// recreates a deleted object gets a new uid and resourceVersion on a real cluster too.
var volatile = [][]string{
	{"metadata", "resourceVersion"}, {"metadata", "uid"}, {"metadata", "creationTimestamp"},
	{"metadata", "managedFields"}, {"metadata", "generation"}, {"status"},
}

// Objects returns every object the API holds, by "resource namespace/name", as JSON without what the API
// server and the controllers write. Node leases are left out: kubelets renew them all the time.
func (api *API) Objects() (map[string]string, error) {
	out := map[string]string{}
	for _, gvr := range api.resources() {
		if gvr.Resource == "leases" && gvr.Group == coordinationv1.GroupName {
			continue
		}
		objs, err := api.list(gvr, "")
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			for _, f := range volatile {
				unstructured.RemoveNestedField(o.Object, f...)
			}
			b, err := json.Marshal(o.Object)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprintf("%s %s/%s", gvr.GroupResource(), o.GetNamespace(), o.GetName())] = string(b)
		}
	}
	return out, nil
}

// mapper maps client-go's kinds, the extra kinds a kind cluster serves, and the kinds of CRDs once they are
// served. Reset does nothing: it learns a CRD's kinds when the CRD is written.
type mapper struct {
	meta.RESTMapper
	extra *meta.DefaultRESTMapper
	mu    sync.Mutex
	known sets.Set[schema.GroupVersionKind]
}

func newMapper() *mapper {
	extra := meta.NewDefaultRESTMapper(nil)
	m := &mapper{extra: extra, known: sets.New[schema.GroupVersionKind]()}
	m.RESTMapper = meta.MultiRESTMapper{testrestmapper.TestOnlyStaticRESTMapper(kscheme.Scheme), extra}
	m.add(schema.GroupVersionKind{Group: crds.Group, Version: crds.Version, Kind: "CustomResourceDefinition"}, crds.Resource, false)
	m.add(schema.GroupVersionKind{Group: apiServices.Group, Version: apiServices.Version, Kind: "APIService"}, apiServices.Resource, false)
	return m
}

func (m *mapper) add(gvk schema.GroupVersionKind, plural string, namespaced bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known.Has(gvk) {
		return
	}
	m.known.Insert(gvk)
	scope := meta.RESTScopeRoot
	if namespaced {
		scope = meta.RESTScopeNamespace
	}
	m.extra.AddSpecific(gvk, gvk.GroupVersion().WithResource(plural), gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scope)
}

func (m *mapper) Reset() {}
