package grader

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/journey/evidence"
	"github.com/cka-lab/lab/scenarios"
)

// A check's verdict can be given once the cluster has converged: what the question touches is either settled
// or stuck in a state that will not change by itself. Convergence is judged from what Kubernetes reports
// (generations observed, rollouts, Pod and container states, probe windows, endpoints, node heartbeats), so a
// wrong fix is failed seconds after it has played out instead of at the end of the settle window, and a
// correct fix still rolling out is never failed.

const (
	// stall is how long a step that a controller normally takes in milliseconds (observing a generation,
	// creating a Pod, binding it, publishing an endpoint) may show no change before lab stops waiting for it.
	stall = 4 * time.Second
	// minFail is the least time a failing verdict waits from the check's start: the scheduler and the
	// kubelet react to a learner's last change (a node uncordoned, a Secret created) within it.
	minFail = 3 * time.Second
	// nodeGrace matches the lab cluster's node-monitor grace period plus a heartbeat: a kubelet restarted by
	// the learner reports Ready again within it, and a node still NotReady after it stays so.
	nodeGrace = 15 * time.Second
	// unheardWait bounds the wait for a kubelet that renews its lease to repost its node's status after the
	// node controller marked it Unknown: 70-90 s after an API server restart on this class of machine.
	unheardWait = 2 * time.Minute
	// probeSlack covers the kubelet's probe scheduling jitter and a probe's own timeout.
	probeSlack = 3 * time.Second
	// kubeletRetry bounds the wait for an init container's own retry loop (until a Service resolves, a file
	// appears) to end once what it waits for exists.
	kubeletRetry = 15 * time.Second
	// manifestCheck is the kubelet's fileCheckFrequency: it acts on a changed static Pod manifest at once
	// (inotify) or at the latest on its next look at the directory.
	manifestCheck = 20 * time.Second
)

// Waiting is one reason the cluster has not converged: an object still on its way somewhere.
type Waiting struct {
	// Key names the object and its state, so an unchanged state can be timed across rounds.
	Key string `json:"-"`
	// What is the line a learner reads: "deployment/web: 1 of 2 updated replicas Ready".
	What string `json:"what"`
	// Quick marks a step that should take milliseconds: it is waited for only while it changes within stall.
	Quick bool `json:"-"`
	// Until, when set, is when the state stops being able to change by itself (a probe window's end).
	Until time.Time `json:"-"`
	// After, for a quick step, is when the component that takes it (the controller-manager, the scheduler)
	// took the lead: its stall counts from then when that is later than the state was first seen.
	After time.Time `json:"-"`
}

// targets are what a question's checks look at: the namespaces of its Pods and objects, its Services, and
// its nodes; probed are the nodes its checks look inside (files, units, commands), and manifests the static
// Pod manifests those checks read on each.
type targets struct {
	namespaces []string
	services   map[string][]string
	nodes      []string
	allNodes   bool
	probed     []string
	manifests  map[string][]string
	operated   []operated
}

// manifestDir is where kubeadm's static Pod manifests are, on every node.
const manifestDir = scenarios.ManifestDir

func targetsOf(q Question) targets {
	t := targets{services: map[string][]string{}, manifests: map[string][]string{}}
	ns := map[string]bool{}
	addNode := func(n string) {
		if n == "" {
			t.allNodes = true
		} else if !slices.Contains(t.nodes, n) {
			t.nodes = append(t.nodes, n)
		}
	}
	probe := func(n string, paths ...string) {
		addNode(n)
		if n == "" {
			return
		}
		if !slices.Contains(t.probed, n) {
			t.probed = append(t.probed, n)
		}
		for _, arg := range paths {
			for _, f := range strings.Fields(arg) {
				if strings.HasPrefix(f, manifestDir) && !slices.Contains(t.manifests[n], f) {
					t.manifests[n] = append(t.manifests[n], f)
				}
			}
		}
	}
	for _, p := range q.Checks {
		fp := p.Check.Touches()
		for _, n := range slices.Concat(fp.Namespaces, fp.Watches) {
			ns[n] = true
		}
		for _, o := range fp.Objects {
			ns[o.Namespace] = true
		}
		for _, s := range fp.Services {
			t.services[s.Namespace] = append(t.services[s.Namespace], s.Name)
		}
		for _, n := range fp.Nodes {
			if n.Inside {
				probe(n.Name, n.Files...)
			} else {
				addNode(n.Name)
			}
		}
		// lab's operator reports the generation it reconciled, which grading waits for.
		if c := p.Check.Custom; c != nil && c.Func == "operatorReconciled" {
			t.operated = append(t.operated, operated{c.Args["resource"], c.Args["namespace"], c.Args["name"]})
		}
	}
	delete(ns, "")
	for n := range ns {
		t.namespaces = append(t.namespaces, n)
	}
	sort.Strings(t.namespaces)
	sort.Strings(t.nodes)
	return t
}

// view is what one round reads of the cluster for convergence.
type view struct {
	pods         []corev1.Pod
	deployments  []appsv1.Deployment
	replicaSets  []appsv1.ReplicaSet
	statefulSets []appsv1.StatefulSet
	daemonSets   []appsv1.DaemonSet
	autoscalers  []autoscalingv2.HorizontalPodAutoscaler
	services     []corev1.Service
	slices       []discoveryv1.EndpointSlice
	configMaps   map[string]map[string]bool // namespace/name -> keys
	secrets      map[string]map[string]bool
	claims       map[string]corev1.PersistentVolumeClaimPhase
	nodes        []corev1.Node
	// sandboxFailed holds the Pods with a sandbox or mount failure reported after the check started.
	sandboxFailed map[string]string
	// control holds kube-system's control-plane Pods (the static Pods' mirrors) and leases the leader leases
	// of the controller-manager and the scheduler.
	control []corev1.Pod
	leases  []coordinationv1.Lease
	// unheard holds the nodes whose kubelets renew their leases but have not reposted their status since the
	// node controller marked them Unknown.
	unheard []corev1.Node
	// facts holds what the probed nodes told from inside; firstRestarts each kubelet's restart count when the
	// check first read it.
	facts         map[string]*nodeFacts
	firstRestarts map[string]int
	manifests     map[string][]string
	// unreconciled holds the custom objects of operatorReconciled checks whose operator has not reported
	// their current generation, with that generation.
	unreconciled map[operated]int64
}

// observe reads what t touches, namespace by namespace, all at once; probe (when set) reads the probed nodes
// from inside.
func (e Env) observe(ctx context.Context, t targets, since time.Time, probe nodeProbe) (*view, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v := &view{configMaps: map[string]map[string]bool{}, secrets: map[string]map[string]bool{},
		claims: map[string]corev1.PersistentVolumeClaimPhase{}, sandboxFailed: map[string]string{},
		facts: map[string]*nodeFacts{}, manifests: t.manifests}
	kc := e.Clients.Kube
	results := make([]*view, len(t.namespaces))
	g, gctx := errgroup.WithContext(ctx)
	for i, ns := range t.namespaces {
		g.Go(func() error {
			r := &view{configMaps: map[string]map[string]bool{}, secrets: map[string]map[string]bool{},
				claims: map[string]corev1.PersistentVolumeClaimPhase{}, sandboxFailed: map[string]string{}}
			results[i] = r
			lo := metav1.ListOptions{}
			pods, err := kc.CoreV1().Pods(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list Pods in %s: %w", ns, err)
			}
			r.pods = pods.Items
			deps, err := kc.AppsV1().Deployments(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list Deployments in %s: %w", ns, err)
			}
			r.deployments = deps.Items
			rss, err := kc.AppsV1().ReplicaSets(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list ReplicaSets in %s: %w", ns, err)
			}
			r.replicaSets = rss.Items
			sts, err := kc.AppsV1().StatefulSets(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list StatefulSets in %s: %w", ns, err)
			}
			r.statefulSets = sts.Items
			dss, err := kc.AppsV1().DaemonSets(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list DaemonSets in %s: %w", ns, err)
			}
			r.daemonSets = dss.Items
			hpas, err := kc.AutoscalingV2().HorizontalPodAutoscalers(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list HorizontalPodAutoscalers in %s: %w", ns, err)
			}
			r.autoscalers = hpas.Items
			for _, name := range t.services[ns] {
				svc, err := kc.CoreV1().Services(ns).Get(gctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					continue
				}
				if err != nil {
					return fmt.Errorf("read Service %s/%s: %w", ns, name, err)
				}
				r.services = append(r.services, *svc)
				sl, err := kc.DiscoveryV1().EndpointSlices(ns).List(gctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
				if err != nil {
					return fmt.Errorf("list EndpointSlices of %s/%s: %w", ns, name, err)
				}
				r.slices = append(r.slices, sl.Items...)
			}
			cms, err := kc.CoreV1().ConfigMaps(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list ConfigMaps in %s: %w", ns, err)
			}
			for _, cm := range cms.Items {
				keys := map[string]bool{}
				for k := range cm.Data {
					keys[k] = true
				}
				for k := range cm.BinaryData {
					keys[k] = true
				}
				r.configMaps[ns+"/"+cm.Name] = keys
			}
			secs, err := kc.CoreV1().Secrets(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list Secrets in %s: %w", ns, err)
			}
			for _, s := range secs.Items {
				keys := map[string]bool{}
				for k := range s.Data {
					keys[k] = true
				}
				for k := range s.StringData {
					keys[k] = true
				}
				r.secrets[ns+"/"+s.Name] = keys
			}
			pvcs, err := kc.CoreV1().PersistentVolumeClaims(ns).List(gctx, lo)
			if err != nil {
				return fmt.Errorf("list PersistentVolumeClaims in %s: %w", ns, err)
			}
			for _, c := range pvcs.Items {
				r.claims[ns+"/"+c.Name] = c.Status.Phase
			}
			evs, err := kc.CoreV1().Events(ns).List(gctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod"})
			if err != nil {
				return fmt.Errorf("list events in %s: %w", ns, err)
			}
			for _, ev := range evs.Items {
				if (ev.Reason == "FailedCreatePodSandBox" || ev.Reason == "FailedMount") && !journey.CacheNotSynced(&ev) && eventTime(ev).After(since) {
					r.sandboxFailed[ns+"/"+ev.InvolvedObject.Name] = ev.Reason
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		// The control plane's own Pods and leases say when a controller step can be expected: a
		// controller-manager or scheduler just restarted acts once it leads.
		pods, err := kc.CoreV1().Pods(metav1.NamespaceSystem).List(gctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
		if err != nil {
			return fmt.Errorf("list the control plane's Pods: %w", err)
		}
		v.control = pods.Items
		leases, err := kc.CoordinationV1().Leases(metav1.NamespaceSystem).List(gctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list leases in kube-system: %w", err)
		}
		v.leases = leases.Items
		// Any node, not only those the checks name: every Pod on an unheard node shows NotReady.
		nl, err := kc.CoreV1().Nodes().List(gctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		renewed, err := evidence.NodeLeases(gctx, kc)
		if err != nil {
			return err
		}
		for _, n := range nl.Items {
			if evidence.Unheard(n, renewed[n.Name]) {
				v.unheard = append(v.unheard, n)
			}
		}
		return nil
	})
	facts := make([]*nodeFacts, len(t.probed))
	for i, n := range t.probed {
		if probe == nil {
			break
		}
		// A node that cannot be read from inside is judged from the API server alone.
		g.Go(func() error {
			facts[i], _ = probe(gctx, n, t.manifests[n])
			return nil
		})
	}
	if len(t.nodes) > 0 || t.allNodes {
		g.Go(func() error {
			nl, err := kc.CoreV1().Nodes().List(gctx, metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("list nodes: %w", err)
			}
			for _, n := range nl.Items {
				if t.allNodes || slices.Contains(t.nodes, n.Name) {
					v.nodes = append(v.nodes, n)
				}
			}
			return nil
		})
	}
	if len(t.operated) > 0 {
		g.Go(func() error {
			var err error
			v.unreconciled, err = e.unreconciled(gctx, t.operated)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, f := range facts {
		if f != nil {
			v.facts[t.probed[i]] = f
		}
	}
	for _, r := range results {
		v.pods = append(v.pods, r.pods...)
		v.deployments = append(v.deployments, r.deployments...)
		v.autoscalers = append(v.autoscalers, r.autoscalers...)
		v.replicaSets = append(v.replicaSets, r.replicaSets...)
		v.statefulSets = append(v.statefulSets, r.statefulSets...)
		v.daemonSets = append(v.daemonSets, r.daemonSets...)
		v.services = append(v.services, r.services...)
		v.slices = append(v.slices, r.slices...)
		for k, x := range r.configMaps {
			v.configMaps[k] = x
		}
		for k, x := range r.secrets {
			v.secrets[k] = x
		}
		for k, x := range r.claims {
			v.claims[k] = x
		}
		for k, x := range r.sandboxFailed {
			v.sandboxFailed[k] = x
		}
	}
	return v, nil
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// stuckReasons are container states the kubelet will not leave without a change to the Pod or its image.
var stuckReasons = []string{"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull",
	"CrashLoopBackOff", "RunContainerError", "CreateContainerError", "PreCreateHookError", "PostStartHookError"}

// waiting returns every reason the viewed objects have not converged at now; since is when the check began.
func (v *view) waiting(since, now time.Time) []Waiting {
	var w []Waiting
	kcm := v.leadSince("kube-controller-manager", now)
	stuckPods := map[string]bool{}
	for i := range v.pods {
		pw, stuck := v.podWaiting(&v.pods[i], since, now)
		w = append(w, pw...)
		if stuck {
			stuckPods[v.pods[i].Namespace+"/"+v.pods[i].Name] = true
		}
	}
	pendingPods := map[string]bool{}
	for _, x := range w {
		pendingPods[strings.SplitN(x.Key, "|", 2)[0]] = true
	}
	// A rollout is only waited for as a controller step when none of its Pods explains it: a Pod stuck says
	// the rollout is stuck, a Pod still starting is already waited for.
	owned := func(ns string, sel *metav1.LabelSelector) (stuck, pending bool) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return false, false
		}
		for _, p := range v.pods {
			if p.Namespace == ns && s.Matches(labels.Set(p.Labels)) {
				k := "pod/" + p.Namespace + "/" + p.Name
				stuck = stuck || stuckPods[p.Namespace+"/"+p.Name]
				pending = pending || pendingPods[k]
			}
		}
		return stuck, pending
	}
	for _, d := range v.deployments {
		name := "deployment/" + d.Name
		if d.Status.ObservedGeneration < d.Generation {
			w = append(w, Waiting{Key: "d/" + d.Namespace + "/" + d.Name + "|gen", What: name + ": the controller has not observed the latest spec yet", Quick: true, After: kcm})
			continue
		}
		if progressDeadlineExceeded(d) {
			continue
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.UpdatedReplicas == want && d.Status.Replicas == want && d.Status.AvailableReplicas == want {
			continue
		}
		if stuck, pending := owned(d.Namespace, d.Spec.Selector); stuck || pending {
			continue
		}
		w = append(w, Waiting{Key: fmt.Sprintf("d/%s/%s|%d/%d/%d/%d", d.Namespace, d.Name, d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas),
			What: fmt.Sprintf("%s: %d of %d updated replicas Ready", name, min(d.Status.UpdatedReplicas, d.Status.ReadyReplicas), want), Quick: true, After: kcm})
	}
	for _, rs := range v.replicaSets {
		if replicaFailure(rs) {
			continue
		}
		want := int32(0)
		if rs.Spec.Replicas != nil {
			want = *rs.Spec.Replicas
		}
		if rs.Status.ObservedGeneration < rs.Generation || rs.Status.Replicas != want {
			w = append(w, Waiting{Key: fmt.Sprintf("rs/%s/%s|%d/%d", rs.Namespace, rs.Name, rs.Status.Replicas, want),
				What: fmt.Sprintf("replicaset/%s: %d of %d Pods created", rs.Name, rs.Status.Replicas, want), Quick: true, After: kcm})
		}
	}
	for _, s := range v.statefulSets {
		want := int32(1)
		if s.Spec.Replicas != nil {
			want = *s.Spec.Replicas
		}
		done := s.Status.ObservedGeneration >= s.Generation && s.Status.Replicas == want && s.Status.ReadyReplicas == want &&
			(s.Status.UpdateRevision == "" || s.Status.CurrentRevision == s.Status.UpdateRevision || s.Status.UpdatedReplicas == want)
		if done {
			continue
		}
		if stuck, pending := owned(s.Namespace, s.Spec.Selector); s.Status.ObservedGeneration >= s.Generation && (stuck || pending) {
			continue
		}
		w = append(w, Waiting{Key: fmt.Sprintf("sts/%s/%s|%d/%d/%d", s.Namespace, s.Name, s.Status.Replicas, s.Status.ReadyReplicas, s.Status.UpdatedReplicas),
			What: fmt.Sprintf("statefulset/%s: %d of %d replicas Ready", s.Name, s.Status.ReadyReplicas, want), Quick: true, After: kcm})
	}
	for _, d := range v.daemonSets {
		st := d.Status
		done := st.ObservedGeneration >= d.Generation && st.UpdatedNumberScheduled == st.DesiredNumberScheduled &&
			st.NumberReady == st.DesiredNumberScheduled && st.CurrentNumberScheduled == st.DesiredNumberScheduled
		if done {
			continue
		}
		if stuck, pending := owned(d.Namespace, d.Spec.Selector); st.ObservedGeneration >= d.Generation && (stuck || pending) {
			continue
		}
		w = append(w, Waiting{Key: fmt.Sprintf("ds/%s/%s|%d/%d/%d", d.Namespace, d.Name, st.NumberReady, st.UpdatedNumberScheduled, st.DesiredNumberScheduled),
			What: fmt.Sprintf("daemonset/%s: %d of %d Pods Ready", d.Name, st.NumberReady, st.DesiredNumberScheduled), Quick: true, After: kcm})
	}
	for _, x := range v.endpointsWaiting() {
		x.After = kcm
		w = append(w, x)
	}
	for _, n := range v.nodes {
		w = append(w, nodeWaiting(n, v.facts[n.Name], v.firstRestarts[n.Name], since, now)...)
	}
	for _, n := range v.unheard {
		w = append(w, unheardWaiting(n, now)...)
	}
	w = append(w, v.staticPodsWaiting(since, now)...)
	w = append(w, v.autoscalersWaiting(since)...)
	w = append(w, v.operatorsWaiting(since)...)
	return w
}

// staticPodsWaiting waits for the static Pods whose manifests the checks read on a probed node: for the
// kubelet to act on a changed manifest, then for the Pod it made to start.
func (v *view) staticPodsWaiting(since, now time.Time) []Waiting {
	var w []Waiting
	for n, paths := range v.manifests {
		f := v.facts[n]
		if f == nil {
			continue
		}
		for _, p := range paths {
			mtime, ok := f.manifests[p]
			if !ok {
				continue
			}
			var mirror *corev1.Pod
			for i := range v.control {
				if v.control[i].Name == mirrorName(p, n) {
					mirror = &v.control[i]
				}
			}
			if sw := staticPodWaiting(p, mtime, mirror, n, now); len(sw) > 0 {
				w = append(w, sw...)
				continue
			}
			if mirror != nil && !slices.ContainsFunc(v.pods, func(q corev1.Pod) bool { return q.UID == mirror.UID }) {
				pw, _ := v.podWaiting(mirror, since, now)
				w = append(w, pw...)
			}
		}
	}
	return w
}

// leadSince is when the control-plane component (kube-controller-manager, kube-scheduler) that takes quick
// steps began to lead: its lease's acquire time when its running process holds the lease, now while a process
// started less than a lease's duration (and a stall) ago does not hold it yet, zero otherwise (no component
// running, or one that has long failed to lead: quick steps then stall from when they were first seen).
func (v *view) leadSince(component string, now time.Time) time.Time {
	var started time.Time
	for _, p := range v.control {
		if p.Labels["component"] != component {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running != nil && cs.State.Running.StartedAt.After(started) {
				started = cs.State.Running.StartedAt.Time
			}
		}
	}
	if started.IsZero() {
		return time.Time{}
	}
	for _, l := range v.leases {
		if l.Name != component || l.Spec.AcquireTime == nil {
			continue
		}
		if acquired := l.Spec.AcquireTime.Time; !acquired.Before(started.Truncate(time.Second)) {
			return acquired
		}
		if l.Spec.LeaseDurationSeconds != nil && now.Sub(started) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second+stall {
			return now
		}
	}
	return time.Time{}
}

// podWaiting returns why a Pod has not converged, and whether it is stuck (which settles its controller too).
func (v *view) podWaiting(p *corev1.Pod, since, now time.Time) ([]Waiting, bool) {
	key := "pod/" + p.Namespace + "/" + p.Name
	name := "pod/" + p.Name
	if p.DeletionTimestamp != nil {
		until := p.DeletionTimestamp.Add(probeSlack)
		if now.Before(until) {
			return []Waiting{{Key: key + "|terminating", What: name + ": terminating", Until: until}}, false
		}
		return nil, true
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil, false
	}
	if p.Spec.NodeName == "" {
		if evidence.Unschedulable(p) {
			return nil, true
		}
		return []Waiting{{Key: key + "|unscheduled", What: name + ": waiting for the scheduler", Quick: true, After: v.leadSince("kube-scheduler", now)}}, false
	}
	if evidence.Ready(p) {
		return nil, false
	}
	if v.nodeDown(p.Spec.NodeName) {
		// Nothing on a node whose kubelet or runtime will not come back by itself starts.
		return nil, true
	}
	statuses := append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if cs.State.Waiting != nil && slices.Contains(stuckReasons, cs.State.Waiting.Reason) {
			return nil, true
		}
	}
	for _, cs := range statuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError" {
			if missing := v.missingRefs(p); missing != "" {
				return nil, true
			}
			// What was missing exists now: the kubelet creates the container on its next sync.
			return []Waiting{{Key: key + "|config", What: fmt.Sprintf("%s: container %s not created yet, its configuration now exists", name, cs.Name)}}, false
		}
	}
	// A Running Pod's containers wait in ContainerCreating too while the kubelet makes them a new sandbox: a Pod
	// restored from an etcd snapshot after its node had stopped it, or one whose sandbox died.
	if p.Status.Phase == corev1.PodPending || slices.ContainsFunc(statuses, beingCreated) {
		if missing := v.missingRefs(p); missing != "" {
			return nil, true
		}
		if _, failed := v.sandboxFailed[p.Namespace+"/"+p.Name]; failed {
			// The kubelet tried again after the check started and failed the same way.
			return nil, true
		}
		return []Waiting{{Key: key + "|creating", What: name + ": containers being created"}}, false
	}
	// Not Ready while its containers are: the node controller marked it so when its node went unheard (an API
	// server outage), and the kubelet, heard again, restores the condition on its next status sync.
	if markedNotReady, since := nodeMarkedNotReady(p); markedNotReady {
		if until := since.Add(unheardWait); now.Before(until) {
			return []Waiting{{Key: key + "|marked", What: name + ": marked NotReady while its node was unheard, the kubelet has not restored it yet", Until: until}}, false
		}
	}
	// Running but not Ready: a readiness (or startup) probe may still pass within its window.
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready || cs.State.Running == nil {
			continue
		}
		until := probeWindow(p, cs.Name, cs.State.Running.StartedAt.Time)
		if now.Before(until) {
			return []Waiting{{Key: key + "|probe/" + cs.Name, What: fmt.Sprintf("%s: container %s started %s ago, its probes may still pass",
				name, cs.Name, now.Sub(cs.State.Running.StartedAt.Time).Round(time.Second)), Until: until}}, false
		}
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.State.Running != nil {
			// An init container that waits for something (a Service, a file) ends within its own retry loop
			// once that exists.
			return []Waiting{{Key: key + "|init/" + cs.Name, What: fmt.Sprintf("%s: init container %s running", name, cs.Name), Until: since.Add(kubeletRetry)}}, false
		}
	}
	return nil, true
}

// beingCreated says whether the kubelet is still making a container's sandbox, volumes or the container.
func beingCreated(cs corev1.ContainerStatus) bool {
	return cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating"
}

// nodeMarkedNotReady says whether p is not Ready only because the node controller said so, and since when:
// it flips the Ready condition alone, where the kubelet flips ContainersReady with it. Readiness gates also
// leave ContainersReady alone, so a Pod with gates is not taken for one.
func nodeMarkedNotReady(p *corev1.Pod) (bool, time.Time) {
	if len(p.Spec.ReadinessGates) > 0 {
		return false, time.Time{}
	}
	var ready, containers *corev1.PodCondition
	for i, c := range p.Status.Conditions {
		switch c.Type {
		case corev1.PodReady:
			ready = &p.Status.Conditions[i]
		case corev1.ContainersReady:
			containers = &p.Status.Conditions[i]
		}
	}
	if ready == nil || containers == nil || ready.Status != corev1.ConditionFalse || containers.Status != corev1.ConditionTrue {
		return false, time.Time{}
	}
	return true, ready.LastTransitionTime.Time
}

// probeWindow is when a container started at started can no longer become Ready by itself: after its startup
// probe's and readiness probe's delays and failure budgets (or at once, without probes).
func probeWindow(p *corev1.Pod, container string, started time.Time) time.Time {
	var c *corev1.Container
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == container {
			c = &p.Spec.Containers[i]
		}
	}
	until := started.Add(probeSlack)
	if c == nil {
		return until
	}
	budget := func(pr *corev1.Probe) time.Duration {
		if pr == nil {
			return 0
		}
		period, threshold := max(pr.PeriodSeconds, 1), max(pr.FailureThreshold, 1)
		if pr.PeriodSeconds == 0 {
			period = 10
		}
		if pr.FailureThreshold == 0 {
			threshold = 3
		}
		return time.Duration(pr.InitialDelaySeconds+period*threshold+max(pr.TimeoutSeconds, 1)) * time.Second
	}
	return until.Add(budget(c.StartupProbe) + budget(c.ReadinessProbe))
}

// missingRefs names a ConfigMap, Secret, key or claim the Pod needs that does not exist, or "".
func (v *view) missingRefs(p *corev1.Pod) string {
	ns := p.Namespace
	has := func(m map[string]map[string]bool, name, key string) bool {
		keys, ok := m[ns+"/"+name]
		return ok && (key == "" || keys[key])
	}
	opt := func(b *bool) bool { return b != nil && *b }
	for _, vol := range p.Spec.Volumes {
		switch {
		case vol.ConfigMap != nil && !opt(vol.ConfigMap.Optional):
			if !has(v.configMaps, vol.ConfigMap.Name, "") {
				return "configmap/" + vol.ConfigMap.Name
			}
			for _, it := range vol.ConfigMap.Items {
				if !has(v.configMaps, vol.ConfigMap.Name, it.Key) {
					return "configmap/" + vol.ConfigMap.Name + " key " + it.Key
				}
			}
		case vol.Secret != nil && !opt(vol.Secret.Optional):
			if !has(v.secrets, vol.Secret.SecretName, "") {
				return "secret/" + vol.Secret.SecretName
			}
			for _, it := range vol.Secret.Items {
				if !has(v.secrets, vol.Secret.SecretName, it.Key) {
					return "secret/" + vol.Secret.SecretName + " key " + it.Key
				}
			}
		case vol.PersistentVolumeClaim != nil:
			if phase, ok := v.claims[ns+"/"+vol.PersistentVolumeClaim.ClaimName]; !ok {
				return "persistentvolumeclaim/" + vol.PersistentVolumeClaim.ClaimName
			} else if phase == corev1.ClaimLost {
				return "persistentvolumeclaim/" + vol.PersistentVolumeClaim.ClaimName + " (lost)"
			}
		}
	}
	for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil && !opt(r.Optional) && !has(v.configMaps, r.Name, r.Key) {
				return "configmap/" + r.Name + " key " + r.Key
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil && !opt(r.Optional) && !has(v.secrets, r.Name, r.Key) {
				return "secret/" + r.Name + " key " + r.Key
			}
		}
		for _, ef := range c.EnvFrom {
			if r := ef.ConfigMapRef; r != nil && !opt(r.Optional) && !has(v.configMaps, r.Name, "") {
				return "configmap/" + r.Name
			}
			if r := ef.SecretRef; r != nil && !opt(r.Optional) && !has(v.secrets, r.Name, "") {
				return "secret/" + r.Name
			}
		}
	}
	return ""
}

// endpointsWaiting reports Services whose ready endpoints do not yet list exactly their Ready Pods.
func (v *view) endpointsWaiting() []Waiting {
	var w []Waiting
	for _, svc := range v.services {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		want := map[string]bool{}
		for i := range v.pods {
			p := &v.pods[i]
			if p.Namespace == svc.Namespace && p.DeletionTimestamp == nil && evidence.Ready(p) && sel.Matches(labels.Set(p.Labels)) {
				want[p.Name] = true
			}
		}
		got := map[string]bool{}
		for _, sl := range v.slices {
			if sl.Namespace != svc.Namespace || sl.Labels[discoveryv1.LabelServiceName] != svc.Name {
				continue
			}
			for _, ep := range sl.Endpoints {
				if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
					got[ep.TargetRef.Name] = true
				}
			}
		}
		same := len(got) == len(want)
		for n := range want {
			same = same && got[n]
		}
		if !same {
			w = append(w, Waiting{Key: fmt.Sprintf("svc/%s/%s|%d/%d", svc.Namespace, svc.Name, len(got), len(want)),
				What: fmt.Sprintf("service/%s: endpoints catching up (%d of %d Ready Pods)", svc.Name, len(got), len(want)), Quick: true})
		}
	}
	return w
}

func progressDeadlineExceeded(d appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}

func replicaFailure(rs appsv1.ReplicaSet) bool {
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// convergence remembers, round after round, when each waiting state was first seen, so a quick step that
// stopped moving stops being waited for, and each probed kubelet's restart count when first read.
type convergence struct {
	firstSeen map[string]time.Time
	restarts  map[string]int
}

// remember records each probed kubelet's first restart count and hands them to the view.
func (c *convergence) remember(v *view) {
	if c.restarts == nil {
		c.restarts = map[string]int{}
	}
	for n, f := range v.facts {
		if _, ok := c.restarts[n]; !ok {
			c.restarts[n] = f.kubelet.restarts
		}
	}
	v.firstRestarts = c.restarts
}

// still keeps the reasons that may still change by themselves at now.
func (c *convergence) still(w []Waiting, now time.Time) []Waiting {
	if c.firstSeen == nil {
		c.firstSeen = map[string]time.Time{}
	}
	seen := map[string]time.Time{}
	var out []Waiting
	for _, x := range w {
		first, ok := c.firstSeen[x.Key]
		if !ok {
			first = now
		}
		seen[x.Key] = first
		switch {
		case !x.Until.IsZero():
			if now.Before(x.Until) {
				out = append(out, x)
			}
		case x.Quick:
			if now.Sub(later(first, x.After)) < stall {
				out = append(out, x)
			}
		default:
			out = append(out, x)
		}
	}
	c.firstSeen = seen
	return out
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// checksTouch says whether q has any check convergence can judge: a question of RBAC and admission probes
// alone converges as soon as its results hold.
func checksTouch(t targets) bool {
	return len(t.namespaces) > 0 || len(t.nodes) > 0 || t.allNodes
}
