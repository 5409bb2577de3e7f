package journey

import (
	"fmt"
	"strings"
)

// Answer is a learner's diagnosis: the stage where the journey stopped and,
// optionally, the object that blocks it (KIND/NAME, kind lower-case singular).
type Answer struct {
	Stage  Stage
	Object string
}

// ParseAnswer reads `lab diagnose STAGE [KIND/NAME]`: stages by name or alias,
// objects by any kind kubectl accepts (deploy/web, configmaps/app, vwc/policy).
func ParseAnswer(stage, object string) (Answer, error) {
	st, err := ParseStage(stage)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{Stage: st}
	if object == "" {
		return a, nil
	}
	kind, name, ok := strings.Cut(object, "/")
	if !ok || kind == "" || name == "" {
		return Answer{}, fmt.Errorf("name the object as KIND/NAME, e.g. deployment/web or cm/app-config, got %q", object)
	}
	a.Object = NormalKind(kind) + "/" + strings.ToLower(name)
	return a, nil
}

// Correct judges the answer against the scenario's: the stage must match, and
// so must the object when both name one.
func (a Answer) Correct(stage Stage, object string) bool {
	if a.Stage != stage {
		return false
	}
	return a.Object == "" || object == "" || SameObject(a.Object, object)
}

// SameObject compares KIND/NAME references the way kubectl resolves them:
// kinds by short name, plural or group-qualified form, names case-insensitively.
func SameObject(a, b string) bool {
	ak, an, _ := strings.Cut(a, "/")
	bk, bn, _ := strings.Cut(b, "/")
	return NormalKind(ak) == NormalKind(bk) && strings.EqualFold(an, bn)
}

// kubectlShortNames are the short names kubectl's discovery reports for built-in kinds.
var kubectlShortNames = map[string]string{
	"cm": "configmap", "cj": "cronjob", "csr": "certificatesigningrequest", "deploy": "deployment",
	"ds": "daemonset", "ep": "endpoints", "ev": "event", "hpa": "horizontalpodautoscaler", "ing": "ingress",
	"limits": "limitrange", "mwc": "mutatingwebhookconfiguration", "netpol": "networkpolicy", "no": "node",
	"ns": "namespace", "pc": "priorityclass", "pdb": "poddisruptionbudget", "po": "pod", "pv": "persistentvolume",
	"pvc": "persistentvolumeclaim", "quota": "resourcequota", "rs": "replicaset", "sa": "serviceaccount",
	"sc": "storageclass", "sts": "statefulset", "svc": "service", "vwc": "validatingwebhookconfiguration",
	"endpoints": "endpoints",
}

// NormalKind turns a kind as typed (Deployment, deployments.apps, deploy) into its lower-case singular.
func NormalKind(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	k, _, _ = strings.Cut(k, ".")
	if full, ok := kubectlShortNames[k]; ok {
		return full
	}
	switch {
	case strings.HasSuffix(k, "sses"):
		return strings.TrimSuffix(k, "es")
	case strings.HasSuffix(k, "ies"):
		return strings.TrimSuffix(k, "ies") + "y"
	case strings.HasSuffix(k, "s") && !strings.HasSuffix(k, "ss"):
		return strings.TrimSuffix(k, "s")
	}
	return k
}

// Traceable are the kinds explain follows to their Pods.
var Traceable = []string{"pod", "deployment", "replicaset", "statefulset", "daemonset", "job"}

// ParseWorkload reads what `lab explain` points at: KIND/NAME with any kind
// kubectl accepts for a workload (deploy/web, sts/db, jobs.batch/j), or a bare
// NAME for a Pod, as kubectl logs reads it.
func ParseWorkload(arg string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(strings.TrimSpace(arg), "/")
	if !ok {
		kind, name = "pod", kind
	}
	kind = NormalKind(kind)
	if name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("name what to explain as KIND/NAME, e.g. deploy/web or pod/web-7d9c-x2k, got %q", arg)
	}
	for _, k := range Traceable {
		if k == kind {
			return kind, name, nil
		}
	}
	return "", "", fmt.Errorf("lab explain follows Pods and their controllers (%s), not %s: got %q", strings.Join(Traceable, ", "), kind, arg)
}
