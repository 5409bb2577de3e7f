package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func init() {
	Register("autoscalerActive", autoscalerActive)
	Register("nodeMetrics", nodeMetrics)
}

// autoscalerActive: the HorizontalPodAutoscaler args.name in args.namespace can scale on its metrics, as
// `kubectl get hpa` shows a current value instead of <unknown>: its ScalingActive condition is True and it has
// read a current value for every metric it targets.
func autoscalerActive(ctx context.Context, e Env, args map[string]string) Result {
	ns, name := args["namespace"], args["name"]
	h, err := e.Clients.Kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return e.fail("there is no HorizontalPodAutoscaler %s in %s", name, ns)
	}
	if err != nil {
		return e.fail("read HorizontalPodAutoscaler %s/%s: %v", ns, name, err)
	}
	switch c := scalingActive(*h); {
	case c == nil:
		return e.fail("HorizontalPodAutoscaler %s/%s has not computed its metrics yet", ns, name)
	case c.Status != corev1.ConditionTrue:
		return e.fail("HorizontalPodAutoscaler %s/%s cannot scale: %s: %s", ns, name, c.Reason, c.Message)
	}
	if len(h.Status.CurrentMetrics) < len(h.Spec.Metrics) {
		return e.fail("HorizontalPodAutoscaler %s/%s has current values for %d of its %d metrics", ns, name, len(h.Status.CurrentMetrics), len(h.Spec.Metrics))
	}
	var read []string
	for _, m := range h.Status.CurrentMetrics {
		if m.Resource != nil && m.Resource.Current.AverageUtilization != nil {
			read = append(read, fmt.Sprintf("%s at %d%% of requests", m.Resource.Name, *m.Resource.Current.AverageUtilization))
		} else if m.Resource != nil && m.Resource.Current.AverageValue != nil {
			read = append(read, fmt.Sprintf("%s at %s", m.Resource.Name, m.Resource.Current.AverageValue))
		}
	}
	return pass("HorizontalPodAutoscaler %s/%s scales on its metrics (%s), at %d replicas", ns, name, strings.Join(read, ", "), h.Status.CurrentReplicas)
}

// nodeMetrics: the resource metrics API answers for every node, as `kubectl top nodes` reads it: the
// APIService that aggregates it is Available and lists a usage for each node.
func nodeMetrics(ctx context.Context, e Env, _ map[string]string) Result {
	const apiService = "v1beta1.metrics.k8s.io"
	svc, err := e.Clients.Dynamic.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}).
		Get(ctx, apiService, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return e.fail("there is no APIService %s: nothing serves the resource metrics API", apiService)
	}
	if err != nil {
		return e.fail("read APIService %s: %v", apiService, err)
	}
	if status, reason, message := condition(svc.Object, "Available"); status != "True" {
		return e.fail("APIService %s is not Available (%s: %s)", apiService, reason, message)
	}
	body, err := e.Clients.Kube.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes").DoRaw(ctx)
	if err != nil {
		return e.fail("kubectl top nodes: %v", err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return e.fail("the node metrics do not decode: %v", err)
	}
	nodes, err := e.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return e.fail("list nodes: %v", err)
	}
	listed := map[string]bool{}
	for _, i := range list.Items {
		listed[i.Metadata.Name] = true
	}
	var missing []string
	for _, n := range nodes.Items {
		if !listed[n.Name] {
			missing = append(missing, n.Name)
		}
	}
	if len(missing) > 0 {
		return e.fail("the resource metrics API has no usage for node %s yet (metrics-server cannot scrape its kubelet)", strings.Join(missing, ", "))
	}
	return pass("the resource metrics API lists the usage of all %d nodes (kubectl top nodes)", len(nodes.Items))
}
