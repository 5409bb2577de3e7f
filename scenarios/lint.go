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
			fp := c.Touches()
			for _, ns := range fp.Namespaces {
				if ns != "" && !systemNamespaces[ns] && !created["Namespace//"+ns] {
					v.add(g.name, path, "check %q names namespace %q, which the setup and faults never create", c.Name, ns)
				}
			}
			for _, o := range fp.Objects {
				if r := o.ObjectRef; o.Exists && !created[r.key()] && !systemNamespaces[r.Namespace] && !clusterObjects[r.key()] {
					v.add(g.name, path, "check %q reads %s, which the setup and faults never create", c.Name, r)
				}
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

// customCreates says which objects a custom fault creates that checks may read, from its arguments.
var customCreates = map[string]func(args map[string]string) []ObjectRef{
	// lab's operator runs as a Deployment and ServiceAccount of its name.
	"operator": func(a map[string]string) []ObjectRef {
		return []ObjectRef{{Kind: "Deployment", Namespace: a["namespace"], Name: a["name"]}, {Kind: "ServiceAccount", Namespace: a["namespace"], Name: a["name"]}}
	},
	// metrics-server registers its API, the one object it creates outside kube-system.
	"installMetricsServer": func(map[string]string) []ObjectRef {
		return []ObjectRef{{Kind: "APIService", Name: "v1beta1.metrics.k8s.io"}}
	},
	// Traefik and the classes it serves.
	"installGatewayController": func(map[string]string) []ObjectRef {
		return []ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: "traefik"}, {Kind: "Deployment", Namespace: "traefik", Name: "traefik"},
			{Kind: "Service", Namespace: "traefik", Name: "traefik"}, {Kind: "GatewayClass", Name: "traefik"}, {Kind: "IngressClass", Name: "traefik"}}
	},
	"tlsSecret": func(a map[string]string) []ObjectRef {
		return []ObjectRef{{Kind: "Secret", Namespace: a["namespace"], Name: a["name"]}}
	},
}

// createdObjects is every object the setup and faults create or patch or the learner is asked to build, as
// "Kind/namespace/name".
func (s *Scenario) createdObjects() map[string]bool {
	out := map[string]bool{}
	for _, b := range s.Builds {
		out[b.key()] = true
	}
	for _, m := range s.Setup {
		objs, err := manifest.Decode([]byte(m))
		if err != nil {
			continue
		}
		for _, o := range objs {
			out[ObjectRef{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}.key()] = true
		}
	}
	for _, f := range s.Faults {
		for _, o := range f.Touches().Objects {
			if o.Exists {
				out[o.key()] = true
			}
		}
	}
	return out
}

// key is how createdObjects names an object: "Kind/namespace/name".
func (r ObjectRef) key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }
