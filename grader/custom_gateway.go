package grader

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cka-lab/lab/internal/journey"
)

func init() {
	Register("routeAccepted", routeAccepted)
	Register("ingressHTTP", ingressHTTP)
	Register("listenerAdmits", listenerAdmits)
}

var gateways = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

// listenerAdmits: the listener args.listener of the Gateway args.gateway in args.namespace admits routes from
// no namespace of the cluster beyond args.only (comma-separated), judged by what its allowedRoutes selects
// among the namespaces that exist, not by how it is written: an empty selector admits them all.
func listenerAdmits(ctx context.Context, e Env, args map[string]string) Result {
	ns, name, listener := args["namespace"], args["gateway"], args["listener"]
	g, err := e.Clients.Dynamic.Resource(gateways).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return e.fail("read Gateway %s/%s: %v", ns, name, err)
	}
	listeners, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
	var from string
	var selector *metav1.LabelSelector
	found := false
	for _, l := range listeners {
		lm, _ := l.(map[string]any)
		if lm["name"] != listener {
			continue
		}
		found = true
		from, _, _ = unstructured.NestedString(lm, "allowedRoutes", "namespaces", "from")
		if sel, ok, _ := unstructured.NestedMap(lm, "allowedRoutes", "namespaces", "selector"); ok {
			selector = &metav1.LabelSelector{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, selector); err != nil {
				return e.fail("the selector of listener %s does not decode: %v", listener, err)
			}
		}
	}
	if !found {
		return e.fail("Gateway %s/%s has no listener %s", ns, name, listener)
	}
	admits := func(n corev1.Namespace) (bool, error) {
		switch from {
		case "All":
			return true, nil
		case "Selector":
			if selector == nil {
				return false, nil
			}
			s, err := metav1.LabelSelectorAsSelector(selector)
			if err != nil {
				return false, err
			}
			return s.Matches(labels.Set(n.Labels)), nil
		default: // Same, the default
			return n.Name == ns, nil
		}
	}
	only := map[string]bool{}
	for _, n := range strings.Split(args["only"], ",") {
		only[strings.TrimSpace(n)] = true
	}
	all, err := e.Clients.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return e.fail("list namespaces: %v", err)
	}
	var extra []string
	for _, n := range all.Items {
		ok, err := admits(n)
		if err != nil {
			return e.fail("the selector of listener %s: %v", listener, err)
		}
		if ok && !only[n.Name] {
			extra = append(extra, n.Name)
		}
	}
	if len(extra) > 0 {
		return e.fail("listener %s of Gateway %s/%s also admits routes from %s", listener, ns, name, strings.Join(extra, ", "))
	}
	return pass("listener %s of Gateway %s/%s admits routes from no namespace beyond %s", listener, ns, name, args["only"])
}

var httpRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// routeAccepted: the HTTPRoute args.route in args.namespace is attached, as its controller reports in its
// status: for every parent it names, the parent's controller has Accepted it and Resolved its references.
func routeAccepted(ctx context.Context, e Env, args map[string]string) Result {
	ns, name := args["namespace"], args["route"]
	r, err := e.Clients.Dynamic.Resource(httpRoutes).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return e.fail("there is no HTTPRoute %s in %s", name, ns)
	}
	if err != nil {
		return e.fail("read HTTPRoute %s/%s: %v", ns, name, err)
	}
	refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
	if len(refs) == 0 {
		return e.fail("HTTPRoute %s/%s names no parent Gateway", ns, name)
	}
	parents, _, _ := unstructured.NestedSlice(r.Object, "status", "parents")
	for _, ref := range refs {
		rm, _ := ref.(map[string]any)
		what := parentName(rm, ns)
		var status map[string]any
		for _, p := range parents {
			pm, _ := p.(map[string]any)
			if pr, _ := pm["parentRef"].(map[string]any); parentName(pr, ns) == what {
				status = pm
			}
		}
		if status == nil {
			return e.fail("no controller reports on HTTPRoute %s/%s for its parent %s: no Gateway of a GatewayClass a controller serves is named so", ns, name, what)
		}
		for _, t := range []string{"Accepted", "ResolvedRefs"} {
			if s, reason, message := condition(map[string]any{"status": status}, t); s != "True" {
				return e.fail("HTTPRoute %s/%s is not %s by its parent %s (%s: %s)", ns, name, t, what, reason, message)
			}
		}
	}
	return pass("HTTPRoute %s/%s is Accepted by its %d parent(s), and its references are resolved", ns, name, len(refs))
}

// parentName is a parentRef as "namespace/name[/sectionName][:port]", its namespace defaulting to the route's.
func parentName(ref map[string]any, routeNS string) string {
	s := func(k string) string { v, _ := ref[k].(string); return v }
	ns := s("namespace")
	if ns == "" {
		ns = routeNS
	}
	out := ns + "/" + s("name")
	if sec := s("sectionName"); sec != "" {
		out += "/" + sec
	}
	if p, ok := ref["port"]; ok {
		out += fmt.Sprintf(":%v", p)
	}
	return out
}

// ingressHTTP: a request for args.host and args.path to the cluster's HTTP entry (Traefik's NodePort on the
// control-plane node: 30080, or 30443 with args.tls "true", TLS with the host as SNI) answers with a body that
// contains args.contains, as a client outside the cluster would see it. With args.certificate "true", the certificate
// served must name that host (its Subject Alternative Names), so a self-signed default does not pass. With
// args.status it passes on that status code alone (a symptom: "answers 404"). args.namespace, where the
// backends run, is for convergence: their rollouts are waited for.
func ingressHTTP(ctx context.Context, e Env, args map[string]string) Result {
	nodes, err := e.Nodes()
	if err != nil || len(nodes) == 0 {
		return e.fail("list the nodes: %v", err)
	}
	var n = nodes[0]
	for _, x := range nodes {
		if role, _ := x.Role(); role == "control-plane" {
			n = x
		}
	}
	host, path := args["host"], args["path"]
	if path == "" {
		path = "/"
	}
	scheme, port := "http", "30080"
	curl := []string{"curl", "-s", "-S", "--max-time", "5", "-o", "-", "-w", "\n%{http_code}"}
	if args["tls"] == "true" {
		scheme, port = "https", "30443"
		curl = append(curl, "-k")
	}
	url := fmt.Sprintf("%s://%s:%s%s", scheme, host, port, path)
	curl = append(curl, "--resolve", host+":"+port+":127.0.0.1", url)
	var stdout, stderr bytes.Buffer
	cmd := n.CommandContext(ctx, curl[0], curl[1:]...)
	cmd.SetStdout(&stdout)
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err != nil {
		return Result{Evidence: fmt.Sprintf("GET %s: %s", url, firstLine(strings.TrimSpace(stderr.String()))), Stage: journey.Service}
	}
	out := stdout.String()
	i := strings.LastIndexByte(out, '\n')
	body, code := out[:max(i, 0)], out[i+1:]
	if want := args["status"]; want != "" {
		if code != want {
			return e.fail("GET %s answers %s, want %s", url, code, want)
		}
		return pass("GET %s answers %s", url, code)
	}
	if code != "200" || !strings.Contains(body, args["contains"]) {
		return Result{Evidence: fmt.Sprintf("GET %s answers %s %q, want 200 with %q", url, code, snippet([]byte(body)), args["contains"]), Stage: journey.Service}
	}
	if args["certificate"] == "true" {
		var cert bytes.Buffer
		probe := n.CommandContext(ctx, "sh", "-c", `echo | openssl s_client -connect 127.0.0.1:30443 -servername "$1" 2>/dev/null | openssl x509 -noout -ext subjectAltName 2>/dev/null`, "sh", host)
		probe.SetStdout(&cert)
		if err := probe.Run(); err != nil || !strings.Contains(cert.String(), "DNS:"+host) {
			return Result{Evidence: fmt.Sprintf("GET %s answers, with a certificate that does not name %s (%s)", url, host, snippet(cert.Bytes())), Stage: journey.Service}
		}
	}
	return pass("GET %s answers 200 with %q", url, args["contains"])
}
