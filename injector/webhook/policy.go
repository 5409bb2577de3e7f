package webhook

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Policy decides on one admission request. Policies are pure so they can be
// tested without a cluster and so a denial is reproducible from the request.
type Policy interface {
	// Name is the policy in the form ParsePolicy accepts, e.g. "require-label:team".
	Name() string
	// Review reports whether req is allowed and, if not, why; the message is
	// what kubectl shows the student, so it names the rule to satisfy.
	Review(req *admissionv1.AdmissionRequest) (allowed bool, message string)
}

// policyUsage lists the accepted forms; it ends every parse error so a typo
// in a scenario is fixable without reading the source.
const policyUsage = "want one of require-limits, require-label:<key>, deny-privileged, allowed-registries:<prefix>[,<prefix>...], inject-sidecar:<image>"

// ParsePolicy turns the --policy flag value into a Policy.
func ParsePolicy(s string) (Policy, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch kind {
	case "":
		return nil, fmt.Errorf("no webhook policy given: %s", policyUsage)
	case "require-limits":
		return withoutArg(kind, hasArg, requireLimits)
	case "deny-privileged":
		return withoutArg(kind, hasArg, denyPrivileged)
	case "require-label":
		if errs := validation.IsQualifiedName(arg); len(errs) > 0 {
			return nil, fmt.Errorf("webhook policy require-label: invalid label key %q: %s", arg, strings.Join(errs, "; "))
		}
		return policy{name: kind + ":" + arg, check: requireLabel(arg)}, nil
	case "allowed-registries":
		var prefixes []string
		for p := range strings.SplitSeq(arg, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				return nil, fmt.Errorf("webhook policy allowed-registries: empty prefix in %q: %s", arg, policyUsage)
			}
			prefixes = append(prefixes, p)
		}
		return policy{name: kind + ":" + strings.Join(prefixes, ","), check: allowedRegistries(prefixes)}, nil
	case "inject-sidecar":
		if _, err := name.ParseReference(arg); err != nil {
			return nil, fmt.Errorf("webhook policy inject-sidecar: invalid image %q: %w", arg, err)
		}
		return sidecar{image: arg}, nil
	default:
		return nil, fmt.Errorf("unknown webhook policy %q: %s", s, policyUsage)
	}
}

// withoutArg rejects an argument rather than ignoring it, so a misspelt
// policy never silently runs as a different one.
func withoutArg(kind string, hasArg bool, check func(object, string) string) (Policy, error) {
	if hasArg {
		return nil, fmt.Errorf("webhook policy %q takes no argument: %s", kind, policyUsage)
	}
	return policy{name: kind, check: check}, nil
}

// policy adapts a check over a decoded object to the Policy interface, so
// every policy shares request decoding and message formatting.
type policy struct {
	name string
	// check returns the violation, or "" when o complies.
	check func(o object, namespace string) string
}

func (p policy) Name() string { return p.name }

func (p policy) Review(req *admissionv1.AdmissionRequest) (bool, string) {
	// DELETE and CONNECT carry no new object, and subresources (scale,
	// status, ...) carry a different type: there is nothing to judge.
	if req == nil || req.SubResource != "" || len(req.Object.Raw) == 0 {
		return true, ""
	}
	o, err := decodeObject(req)
	if err != nil {
		return false, fmt.Sprintf("%v (policy %s)", err, p.name)
	}
	if msg := p.check(o, req.Namespace); msg != "" {
		return false, fmt.Sprintf("%s (policy %s)", msg, p.name)
	}
	return true, ""
}

func requireLimits(o object, ns string) string {
	for _, c := range o.containers() {
		var missing []string
		if _, ok := c.Resources.Limits[corev1.ResourceCPU]; !ok {
			missing = append(missing, "cpu")
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			missing = append(missing, "memory")
		}
		if len(missing) > 0 {
			return fmt.Sprintf("%s has no %s limit: every container in namespace %s must set resources.limits.cpu and resources.limits.memory",
				c.desc, strings.Join(missing, " or "), ns)
		}
	}
	return ""
}

func denyPrivileged(o object, ns string) string {
	if o.spec == nil {
		return ""
	}
	if o.spec.HostNetwork {
		return fmt.Sprintf("%s uses hostNetwork: pods in namespace %s may not share the node's network namespace", o.desc(), ns)
	}
	for _, c := range o.containers() {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			return fmt.Sprintf("%s is privileged: containers in namespace %s may not set securityContext.privileged", c.desc, ns)
		}
	}
	return ""
}

func requireLabel(key string) func(object, string) string {
	return func(o object, ns string) string {
		if _, ok := o.meta.Labels[key]; !ok {
			return fmt.Sprintf("%s has no label %q: every object in namespace %s must carry it", o.desc(), key, ns)
		}
		// Checking the template too makes the fault visible at the
		// Deployment rather than only as failing ReplicaSet events.
		if o.podMeta != nil {
			if _, ok := o.podMeta.Labels[key]; !ok {
				return fmt.Sprintf("the pod template of %s has no label %q: pods in namespace %s must carry it too", o.desc(), key, ns)
			}
		}
		return ""
	}
}

func allowedRegistries(prefixes []string) func(object, string) string {
	return func(o object, ns string) string {
		for _, c := range o.containers() {
			full := normaliseImage(c.Image)
			if hasAnyPrefix(full, prefixes) {
				continue
			}
			shown := fmt.Sprintf("%q", c.Image)
			if full != c.Image {
				shown += fmt.Sprintf(" (%s)", full)
			}
			return fmt.Sprintf("%s uses image %s: images in namespace %s must start with %s",
				c.desc, shown, ns, strings.Join(prefixes, " or "))
		}
		return ""
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// normaliseImage spells out Docker Hub defaults the way the container runtime
// resolves them, so "nginx:1.27" matches a "docker.io/library/" prefix.
func normaliseImage(image string) string {
	first, rest, found := strings.Cut(image, "/")
	// A first component without '.' or ':' (and not localhost) is a Docker
	// Hub namespace, not a registry host.
	if !found || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		first, rest = "docker.io", image
	}
	if first == "index.docker.io" {
		first = "docker.io"
	}
	if first == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return first + "/" + rest
}
