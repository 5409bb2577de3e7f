package grader

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// metricsWindow is how long a HorizontalPodAutoscaler takes to act on new Pods: metrics-server's first
// samples of them (a CPU rate needs two scrapes, 15 s apart), the first the autoscaler accepts being taken
// after the Pod became Ready (43 s after it, seen here), and the autoscaler's next sync (every 15 s).
const metricsWindow = 60 * time.Second

// firstSync is how long the autoscaler controller takes to compute a new HorizontalPodAutoscaler's metrics for
// the first time: it syncs each one every 15 s (its first condition appeared 14 s after creation, seen here).
const firstSync = 20 * time.Second

// autoscalersWaiting waits for a HorizontalPodAutoscaler that cannot scale yet while what it reads may still
// change by itself: a new one not synced yet, its spec not observed (where the autoscaler reports the generation it observed), or Pods of
// its namespace that became Ready less than metricsWindow ago, whose metrics it has not read yet.
func (v *view) autoscalersWaiting(since time.Time) []Waiting {
	var w []Waiting
	for _, h := range v.autoscalers {
		reason := "no ScalingActive condition yet"
		name := "horizontalpodautoscaler/" + h.Name
		if c := scalingActive(h); c != nil && c.Status == corev1.ConditionTrue {
			continue
		} else if c != nil {
			reason = c.Reason
		} else {
			w = append(w, Waiting{Key: "hpa/" + h.Namespace + "/" + h.Name + "|new", What: name + ": the autoscaler has not computed its metrics yet (it syncs every 15 s)",
				Until: h.CreationTimestamp.Add(firstSync)})
		}
		if h.Status.ObservedGeneration != nil && *h.Status.ObservedGeneration < h.Generation {
			w = append(w, Waiting{Key: "hpa/" + h.Namespace + "/" + h.Name + "|gen", What: name + ": the autoscaler has not observed the latest spec yet",
				Until: since.Add(20 * time.Second)})
			continue
		}
		var newest time.Time
		for _, p := range v.pods {
			if p.Namespace != h.Namespace {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(newest) {
					newest = c.LastTransitionTime.Time
				}
			}
		}
		if !newest.IsZero() {
			w = append(w, Waiting{Key: "hpa/" + h.Namespace + "/" + h.Name + "|" + reason,
				What:  fmt.Sprintf("%s: %s (its metrics of Pods Ready since %s are read within %s)", name, reason, newest.Format(time.TimeOnly), metricsWindow),
				Until: newest.Add(metricsWindow)})
		}
	}
	return w
}

// scalingActive reads the autoscaler's ScalingActive condition: whether it could compute its metrics (nil
// before it has tried).
func scalingActive(h autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == autoscalingv2.ScalingActive {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}
