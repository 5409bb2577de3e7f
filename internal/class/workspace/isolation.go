package workspace

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/manifest"
	"github.com/cka-lab/lab/scenarios"
)

// Isolation is what every learner namespace of a class gets besides its RBAC: a Pod Security level, a quota
// and container defaults sized for the class's scenarios, and which NetworkPolicies lab adds. It is a
// function of the class's scenarios (IsolationFor), the same for every learner.
type Isolation struct {
	// PodSecurity is the enforced Pod Security Standard: restricted unless a scenario needs baseline, as Why says.
	PodSecurity psapi.Level
	Why         string
	// Quota is the namespace's ResourceQuota; DefaultRequest and DefaultLimit are what a LimitRange gives a
	// container that sets none, so workloads without resources still admit under the quota.
	Quota                        corev1.ResourceList
	DefaultRequest, DefaultLimit corev1.ResourceList
	// PodTraffic admits ingress from the namespace's own Pods. It is false when a scenario brings its own
	// NetworkPolicies: policies add up, so lab's allow would mask the scenario's fault.
	PodTraffic bool
	// Egress confines egress to the namespace, DNS and the API server; false when a scenario brings an egress
	// NetworkPolicy, for the same reason.
	Egress bool
}

// Defaults and floors: a container without resources asks for a little, and a namespace holds at least a
// scenario of a few small Pods and a learner's debugging Pod.
var (
	defaultRequest = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	defaultLimit   = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	quotaFloor     = corev1.ResourceList{
		corev1.ResourcePods:           resource.MustParse("10"),
		corev1.ResourceRequestsCPU:    resource.MustParse("1"),
		corev1.ResourceRequestsMemory: resource.MustParse("1Gi"),
		corev1.ResourceLimitsCPU:      resource.MustParse("2"),
		corev1.ResourceLimitsMemory:   resource.MustParse("2Gi"),
	}
	// objectQuota bounds what a learner can pile into the shared API server; NodePort and LoadBalancer
	// Services, which open every node to the room, are allowed only as many as the scenarios make.
	objectQuota = corev1.ResourceList{
		corev1.ResourceServices:               resource.MustParse("20"),
		corev1.ResourceConfigMaps:             resource.MustParse("50"),
		corev1.ResourceSecrets:                resource.MustParse("50"),
		corev1.ResourcePersistentVolumeClaims: resource.MustParse("10"),
	}
)

// headroom multiplies a scenario's footprint: a rollout surges, a stuck one keeps its old Pods, and a learner
// runs a Pod or two of their own while fixing it.
const headroom = 2

// footprint is what one scenario's manifests run at once.
type footprint struct {
	requests, limits corev1.ResourceList
	pods, nodePorts  int64
	// biggest is the largest request of any one container, which the default limit must not be below (a
	// container that asks for more than a defaulted limit is invalid).
	biggest corev1.ResourceList
}

// IsolationFor sizes a class's namespaces from its scenarios, instantiated for the class's seed as the
// learners' labs will: their setup and fault manifests say what runs (the solutions change those objects).
// A scenario is judged against Pod Security restricted, then baseline: its level is the first its Pods pass,
// or the level its own Namespace declares (a scenario about Pod Security); a scenario whose Pods pass neither
// cannot run in a learner's namespace and is refused. The class's level is its least strict scenario's.
func IsolationFor(cat *scenarios.Catalog, ids []string, seed int64) (Isolation, error) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return Isolation{}, fmt.Errorf("load the Pod Security checks: %w", err)
	}
	iso := Isolation{PodSecurity: psapi.LevelRestricted, PodTraffic: true, Egress: true,
		Quota: quotaFloor.DeepCopy(), DefaultRequest: defaultRequest.DeepCopy(), DefaultLimit: defaultLimit.DeepCopy()}
	var baseline []string
	var nodePorts int64
	for _, id := range ids {
		sc, err := cat.Get(id)
		if err != nil {
			return Isolation{}, err
		}
		inst, err := sc.Instantiate(seed, exam.Nodeless{})
		if err != nil {
			return Isolation{}, fmt.Errorf("scenario %s: %w", id, err)
		}
		objs, err := objectsOf(inst)
		if err != nil {
			return Isolation{}, err
		}
		level, why, err := podSecurityOf(eval, id, objs)
		if err != nil {
			return Isolation{}, err
		}
		if level == psapi.LevelBaseline {
			baseline = append(baseline, id+" ("+why+")")
		}
		fp, err := footprintOf(id, objs)
		if err != nil {
			return Isolation{}, err
		}
		nodePorts = max(nodePorts, fp.nodePorts)
		grow(iso.Quota, corev1.ResourcePods, *resource.NewQuantity(headroom*fp.pods+2, resource.DecimalSI))
		for name, q := range fp.requests {
			grow(iso.Quota, corev1.ResourceName("requests."+name), times(q, headroom))
		}
		for name, q := range fp.limits {
			grow(iso.Quota, corev1.ResourceName("limits."+name), times(q, headroom))
		}
		for name, q := range fp.biggest {
			grow(iso.DefaultLimit, name, q)
		}
		for _, o := range objs {
			if o.GetKind() != "NetworkPolicy" {
				continue
			}
			types, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "policyTypes")
			iso.PodTraffic = false
			if _, hasEgress, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "egress"); hasEgress || slices.Contains(types, "Egress") {
				iso.Egress = false
			}
		}
		// A scenario's own quota is what its fix may raise: lab's must not be the one that refuses.
		for _, o := range objs {
			if o.GetKind() == "ResourceQuota" {
				var q corev1.ResourceQuota
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &q); err != nil {
					return Isolation{}, fmt.Errorf("scenario %s: ResourceQuota %s: %w", id, o.GetName(), err)
				}
				for name, v := range q.Spec.Hard {
					if _, sized := iso.Quota[name]; sized {
						grow(iso.Quota, name, times(v, headroom))
					}
				}
			}
		}
	}
	for name, q := range objectQuota {
		iso.Quota[name] = q.DeepCopy()
	}
	iso.Quota[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(nodePorts, resource.DecimalSI)
	iso.Quota[corev1.ResourceServicesLoadBalancers] = *resource.NewQuantity(0, resource.DecimalSI)
	if len(baseline) > 0 {
		iso.PodSecurity, iso.Why = psapi.LevelBaseline, strings.Join(baseline, ", ")
	}
	return iso, nil
}

// objectsOf decodes the scenario's setup and apply-fault manifests.
func objectsOf(inst *scenarios.Instance) ([]*unstructured.Unstructured, error) {
	texts := slices.Clone(inst.Setup)
	for _, f := range inst.Faults {
		if f.Apply != nil {
			texts = append(texts, f.Apply.Manifest)
		}
	}
	var objs []*unstructured.Unstructured
	for _, t := range texts {
		os, err := manifest.Decode([]byte(t))
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", inst.ID, err)
		}
		objs = append(objs, os...)
	}
	return objs, nil
}

// workload is one Pod template and how many Pods run from it at once.
type workload struct {
	what     string
	replicas int64
	pod      corev1.PodTemplateSpec
}

// workloadsOf finds the Pod templates among objs: Pods, and the templates of workload controllers.
func workloadsOf(id string, objs []*unstructured.Unstructured) ([]workload, error) {
	var out []workload
	for _, o := range objs {
		path := []string{"spec", "template"}
		countAt := []string{"spec", "replicas"}
		switch o.GetKind() {
		case "Pod":
			path, countAt = nil, nil
		case "Deployment", "ReplicaSet", "StatefulSet", "ReplicationController":
		case "DaemonSet":
			countAt = nil
		case "Job":
			countAt = []string{"spec", "parallelism"}
		case "CronJob":
			path, countAt = []string{"spec", "jobTemplate", "spec", "template"}, []string{"spec", "jobTemplate", "spec", "parallelism"}
		default:
			continue
		}
		var raw map[string]any
		if path == nil {
			raw = o.Object
		} else if raw, _, _ = unstructured.NestedMap(o.Object, path...); raw == nil {
			continue
		}
		var tmpl corev1.PodTemplateSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &tmpl); err != nil {
			return nil, fmt.Errorf("scenario %s: the Pods of %s %s: %w", id, o.GetKind(), o.GetName(), err)
		}
		n := int64(1)
		if countAt != nil {
			if v, found, _ := unstructured.NestedInt64(o.Object, countAt...); found {
				n = v
			}
		}
		out = append(out, workload{what: o.GetKind() + " " + o.GetName(), replicas: n, pod: tmpl})
	}
	return out, nil
}

// podSecurityOf is the Pod Security level a scenario's Pods need, and why when it is not restricted.
func podSecurityOf(eval policy.Evaluator, id string, objs []*unstructured.Unstructured) (psapi.Level, string, error) {
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			if declared := o.GetLabels()[psapi.EnforceLevelLabel]; declared != "" {
				level, err := psapi.ParseLevel(declared)
				if err != nil || level == psapi.LevelPrivileged {
					return "", "", fmt.Errorf("scenario %s declares Pod Security %q, which a learner's namespace does not run", id, declared)
				}
				return level, "its namespace enforces " + declared, nil
			}
		}
	}
	ws, err := workloadsOf(id, objs)
	if err != nil {
		return "", "", err
	}
	latest := psapi.LatestVersion()
	level, why := psapi.LevelRestricted, ""
	for _, w := range ws {
		if r := policy.AggregateCheckResults(eval.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelBaseline, Version: latest}, &w.pod.ObjectMeta, &w.pod.Spec)); !r.Allowed {
			return "", "", fmt.Errorf("scenario %s runs Pods that Pod Security baseline refuses (%s: %s): a learner's namespace cannot run it", id, w.what, r.ForbiddenDetail())
		}
		if level == psapi.LevelBaseline {
			continue
		}
		if r := policy.AggregateCheckResults(eval.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelRestricted, Version: latest}, &w.pod.ObjectMeta, &w.pod.Spec)); !r.Allowed {
			level, why = psapi.LevelBaseline, w.what+": "+r.ForbiddenReason()
		}
	}
	return level, why, nil
}

// footprintOf adds up what a scenario's workloads request and are limited to, a container without resources
// counting with the LimitRange's defaults.
func footprintOf(id string, objs []*unstructured.Unstructured) (footprint, error) {
	ws, err := workloadsOf(id, objs)
	if err != nil {
		return footprint{}, err
	}
	fp := footprint{requests: corev1.ResourceList{}, limits: corev1.ResourceList{}, biggest: corev1.ResourceList{}}
	for _, w := range ws {
		fp.pods += w.replicas
		for _, c := range slices.Concat(w.pod.Spec.InitContainers, w.pod.Spec.Containers) {
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[name]
				lim, hasLim := c.Resources.Limits[name]
				switch {
				case !hasReq && hasLim:
					req = lim
				case !hasReq:
					req = defaultRequest[name]
				}
				if !hasLim {
					lim = defaultLimit[name]
					if req.Cmp(lim) > 0 {
						lim = req
					}
				}
				grow(fp.biggest, name, req)
				add(fp.requests, name, times(req, w.replicas))
				add(fp.limits, name, times(lim, w.replicas))
			}
		}
	}
	for _, o := range objs {
		if t, _, _ := unstructured.NestedString(o.Object, "spec", "type"); o.GetKind() == "Service" && (t == "NodePort" || t == "LoadBalancer") {
			fp.nodePorts++
		}
	}
	return fp, nil
}

// grow raises list[name] to q when q is larger.
func grow(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	if cur, ok := list[name]; !ok || q.Cmp(cur) > 0 {
		list[name] = q.DeepCopy()
	}
}

func add(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	sum := list[name]
	sum.Add(q)
	list[name] = sum
}

func times(q resource.Quantity, n int64) resource.Quantity {
	q = q.DeepCopy()
	q.Mul(n)
	return q
}

// Names of the objects lab puts into every learner namespace. The learner's admin role may read the quota and
// the LimitRange but not change them; it may change NetworkPolicies, so deleting lab-isolation opens only the
// learner's own Pods.
const (
	quotaName      = "lab-quota"
	limitRangeName = "lab-defaults"
	ingressPolicy  = "lab-isolation"
	egressPolicy   = "lab-egress"
)

// namespaceLabels are the Pod Security labels of a learner namespace: enforced, and warned about, at the
// latest version of the level.
func (iso Isolation) namespaceLabels() map[string]string {
	return map[string]string{
		psapi.EnforceLevelLabel: string(iso.PodSecurity), psapi.EnforceVersionLabel: psapi.VersionLatest,
		psapi.WarnLevelLabel: string(iso.PodSecurity), psapi.WarnVersionLabel: psapi.VersionLatest,
	}
}

// quota is the namespace's ResourceQuota.
func (iso Isolation) quota(meta metav1.ObjectMeta) *corev1.ResourceQuota {
	meta.Name = quotaName
	return &corev1.ResourceQuota{ObjectMeta: meta, Spec: corev1.ResourceQuotaSpec{Hard: iso.Quota.DeepCopy()}}
}

// limitRange gives a container without resources the class's defaults.
func (iso Isolation) limitRange(meta metav1.ObjectMeta) *corev1.LimitRange {
	meta.Name = limitRangeName
	return &corev1.LimitRange{ObjectMeta: meta, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, DefaultRequest: iso.DefaultRequest.DeepCopy(), Default: iso.DefaultLimit.DeepCopy()}}}}
}

// policies are the namespace's NetworkPolicies. Ingress comes only from the namespace's own Pods (unless a
// scenario's policies decide that) and from the API server, whose Service and Pod proxy the grader's HTTP
// checks go through; the kubelet's probes come from the Pod's own node, which NetworkPolicy always admits.
// Egress goes to the namespace and to the cluster DNS, nowhere else.
func (iso Isolation) policies(meta metav1.ObjectMeta, apiServer []string) []*networkingv1.NetworkPolicy {
	ingress := networkingv1.NetworkPolicy{ObjectMeta: meta, Spec: networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	ingress.Name = ingressPolicy
	if iso.PodTraffic {
		ingress.Spec.Ingress = append(ingress.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}})
	}
	var fromAPI []networkingv1.NetworkPolicyPeer
	for _, cidr := range apiServer {
		fromAPI = append(fromAPI, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr}})
	}
	ingress.Spec.Ingress = append(ingress.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{From: fromAPI})
	out := []*networkingv1.NetworkPolicy{&ingress}
	if !iso.Egress {
		return out
	}
	udp, tcp, dns := corev1.ProtocolUDP, corev1.ProtocolTCP, intstr.FromInt32(53)
	egress := networkingv1.NetworkPolicy{ObjectMeta: meta, Spec: networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress: []networkingv1.NetworkPolicyEgressRule{
			{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}},
			{To: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: metav1.NamespaceSystem}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}}},
		}}}
	egress.Name = egressPolicy
	return append(out, &egress)
}

// String says in one line what each learner namespace gets, for the instructor.
func (iso Isolation) String() string {
	ps := "Pod Security " + string(iso.PodSecurity)
	if iso.Why != "" {
		ps += " for " + iso.Why
	}
	q := func(n corev1.ResourceName) string { v := iso.Quota[n]; return v.String() }
	traffic := "ingress from its own Pods and the API server"
	if !iso.PodTraffic {
		traffic = "ingress from the API server and what the scenarios' NetworkPolicies allow"
	}
	egress := "egress to its own Pods and DNS"
	if !iso.Egress {
		egress = "egress left to the scenarios' NetworkPolicies"
	}
	return fmt.Sprintf("%s; quota %s pods, requests %s CPU %s memory, limits %s CPU %s memory; %s; %s", ps,
		q(corev1.ResourcePods), q(corev1.ResourceRequestsCPU), q(corev1.ResourceRequestsMemory),
		q(corev1.ResourceLimitsCPU), q(corev1.ResourceLimitsMemory), traffic, egress)
}
