package scenarios

import "github.com/cka-lab/lab/internal/manifest"

// systemNamespaces exist in every lab cluster, so checks may name them without a scenario creating them.
var systemNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true, "local-path-storage": true}

// clusterObjects are the cluster-scoped objects every lab cluster has (kind's default StorageClass), by key.
var clusterObjects = map[string]bool{"StorageClass//standard": true}

// Lint checks what Validate cannot see alone: custom checks and faults exist in code (the predicates come from
// the grader and injector registries), and every namespace or object a check names is created by the
// scenario's setup or faults, is one the learner builds, or exists in every cluster.
func Lint(s *Scenario, customCheck, customFault func(string) bool) Errors {
	v := &validator{s: s}
	created := s.createdObjects()
	groups := []struct {
		name   string
		checks []Check
	}{{"symptom", s.Symptom}, {"checks", s.Checks}, {"collateral", s.Collateral}}
	for _, g := range groups {
		for i, c := range g.checks {
			path := []any{g.name, i}
			if c.Custom != nil && !customCheck(c.Custom.Func) {
				v.add(g.name+".custom.func", path, "no custom check %q is registered in the grader", c.Custom.Func)
			}
			if ns := c.namespace(); ns != "" && !systemNamespaces[ns] && !created["Namespace//"+ns] {
				v.add(g.name, path, "check %q names namespace %q, which the setup and faults never create", c.Name, ns)
			}
			if r := c.object(); r != nil && !created[r.key()] && !systemNamespaces[r.Namespace] && !clusterObjects[r.key()] {
				v.add(g.name, path, "check %q reads %s, which the setup and faults never create", c.Name, r)
			}
		}
	}
	for i, f := range s.Faults {
		if f.Custom != nil && !customFault(f.Custom.Func) {
			v.add("faults.custom.func", []any{"faults", i}, "no custom fault %q is registered in the injector", f.Custom.Func)
		}
	}
	return v.errs
}

// customCreates says which objects ("Kind/namespace/name") a custom fault creates that checks may read, from
// its arguments.
var customCreates = map[string]func(args map[string]string) []string{
	// lab's operator runs as a Deployment and ServiceAccount of its name.
	"operator": func(a map[string]string) []string {
		return []string{"Deployment/" + a["namespace"] + "/" + a["name"], "ServiceAccount/" + a["namespace"] + "/" + a["name"]}
	},
	// metrics-server registers its API, the one object it creates outside kube-system.
	"installMetricsServer": func(map[string]string) []string { return []string{"APIService//v1beta1.metrics.k8s.io"} },
	// Traefik and the classes it serves.
	"installGatewayController": func(map[string]string) []string {
		return []string{"Namespace//traefik", "Deployment/traefik/traefik", "Service/traefik/traefik", "GatewayClass//traefik", "IngressClass//traefik"}
	},
	"tlsSecret": func(a map[string]string) []string { return []string{"Secret/" + a["namespace"] + "/" + a["name"]} },
}

// createdObjects is every object the setup and faults create or patch or the learner is asked to build, as
// "Kind/namespace/name".
func (s *Scenario) createdObjects() map[string]bool {
	out := map[string]bool{}
	for _, b := range s.Builds {
		out[b.key()] = true
	}
	manifests := append([]string{}, s.Setup...)
	for _, f := range s.Faults {
		switch {
		case f.Patch != nil:
			// A patched object exists, or the fault fails: the cluster's own (the standard StorageClass).
			out[f.Patch.Object.key()] = true
		case f.Apply != nil:
			manifests = append(manifests, f.Apply.Manifest)
		case f.Custom != nil && customCreates[f.Custom.Func] != nil:
			for _, k := range customCreates[f.Custom.Func](f.Custom.Args) {
				out[k] = true
			}
		case f.Webhook != nil:
			w := f.Webhook
			config := "ValidatingWebhookConfiguration//" + w.Name
			if w.Mutating {
				config = "MutatingWebhookConfiguration//" + w.Name
			}
			for _, k := range []string{"Deployment/" + w.Namespace + "/" + w.Name, "Service/" + w.Namespace + "/" + w.Name,
				"Secret/" + w.Namespace + "/" + w.Name + "-tls", "Namespace//" + w.Namespace, config} {
				out[k] = true
			}
		}
	}
	for _, m := range manifests {
		objs, err := manifest.Decode([]byte(m))
		if err != nil {
			continue
		}
		for _, o := range objs {
			out[ObjectRef{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}.key()] = true
		}
	}
	return out
}

// namespace is the namespace a check reads Pods, events or Services in.
func (c *Check) namespace() string {
	switch {
	case c.PodsReady != nil:
		return c.PodsReady.Namespace
	case c.PodState != nil:
		return c.PodState.Namespace
	case c.Event != nil:
		return c.Event.Namespace
	case c.Endpoints != nil:
		return c.Endpoints.Namespace
	case c.HTTP != nil:
		return c.HTTP.Namespace
	case c.Exec != nil:
		return c.Exec.Namespace
	case c.Logs != nil:
		return c.Logs.Namespace
	}
	return ""
}

// key is how createdObjects names an object: "Kind/namespace/name".
func (r ObjectRef) key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// object is the object a check expects to exist (field and exists checks); nil for others. Absence checks and
// cluster-scoped objects the cluster itself owns (a node) do not need a creator.
func (c *Check) object() *ObjectRef {
	switch {
	case c.Exists != nil:
		return c.Exists
	case c.SameObject != nil && c.SameObject.Kind != "Node":
		return c.SameObject
	case c.Tolerates != nil:
		return &c.Tolerates.Object
	case c.Container != nil:
		return &c.Container.Object
	case c.Field != nil && !c.Field.Absent && c.Field.Object.Kind != "Node" && c.Field.Object.Kind != "ClusterRole":
		return &c.Field.Object
	}
	return nil
}
