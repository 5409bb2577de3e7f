package grader

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cka-lab/lab/scenarios"
)

// podSpec reads the Pod template of a workload, or a Pod's spec.
func (e Env) podSpec(ctx context.Context, r scenarios.ObjectRef) (*corev1.PodSpec, error) {
	live, err := e.get(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r, err)
	}
	if live == nil {
		return nil, fmt.Errorf("%s does not exist", r)
	}
	path := []string{"spec", "template", "spec"}
	switch r.Kind {
	case "Pod":
		path = []string{"spec"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	raw, _, err := unstructured.NestedMap(live.Object, path...)
	if err != nil {
		return nil, fmt.Errorf("read the Pod spec of %s: %w", r, err)
	}
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return nil, fmt.Errorf("read the Pod spec of %s: %w", r, err)
	}
	return &spec, nil
}

func (e Env) container(ctx context.Context, c *scenarios.ContainerCheck) Result {
	spec, err := e.podSpec(ctx, c.Object)
	if err != nil {
		return e.fail("%v", err)
	}
	var ctr *corev1.Container
	for i := range spec.Containers {
		if c.Name == "" && i == 0 || spec.Containers[i].Name == c.Name {
			ctr = &spec.Containers[i]
			break
		}
	}
	if ctr == nil {
		return e.fail("%s has no container %q", c.Object, c.Name)
	}
	if len(c.CommandLine) > 0 {
		got := append(slices.Clone(ctr.Command), ctr.Args...)
		desc := fmt.Sprintf("the container %s of %s runs %q", ctr.Name, c.Object, got)
		if len(ctr.Command) == 0 {
			desc = fmt.Sprintf("the container %s of %s runs the image's own command with args %q", ctr.Name, c.Object, ctr.Args)
		}
		if len(ctr.Command) > 0 && slices.Equal(got, c.CommandLine) {
			return pass("%s", desc)
		}
		return e.fail("%s, want %q", desc, c.CommandLine)
	}
	port, typ, path, how := probePort(ctr, c.Probe.Kind)
	desc := fmt.Sprintf("the %s probe of %s's container %s %s", c.Probe.Kind, c.Object, ctr.Name, how)
	want := fmt.Sprintf("port %d", c.Probe.Port)
	if c.Probe.Type != "" {
		want = map[string]string{"http": "an HTTP GET", "tcp": "a TCP connect", "grpc": "a gRPC check"}[c.Probe.Type] + " on " + want
	}
	if c.Probe.Path != "" {
		want += " for " + c.Probe.Path
	}
	if port == c.Probe.Port && (c.Probe.Type == "" || typ == c.Probe.Type) && (c.Probe.Path == "" || path == c.Probe.Path) {
		return pass("%s", desc)
	}
	return e.fail("%s, want %s", desc, want)
}

// probePort is the port a probe reaches, a named port resolved against the container's ports as the
// kubelet resolves it (0: no port), its type (http, tcp, grpc, exec; "" when unset), an HTTP probe's path,
// and how the probe reaches it.
func probePort(ctr *corev1.Container, kind string) (port int32, typ, path, how string) {
	p := map[string]*corev1.Probe{"readiness": ctr.ReadinessProbe, "liveness": ctr.LivenessProbe, "startup": ctr.StartupProbe}[kind]
	if p == nil {
		return 0, "", "", "is not set"
	}
	var named intstr.IntOrString
	switch {
	case p.HTTPGet != nil:
		named, typ, path, how = p.HTTPGet.Port, "http", p.HTTPGet.Path, "is an HTTP GET for "+p.HTTPGet.Path+" on port "
	case p.TCPSocket != nil:
		named, typ, how = p.TCPSocket.Port, "tcp", "is a TCP connect on port "
	case p.GRPC != nil:
		return p.GRPC.Port, "grpc", "", fmt.Sprintf("is a gRPC check on port %d", p.GRPC.Port)
	default:
		return 0, "exec", "", "runs a command, on no port"
	}
	if named.Type == intstr.Int {
		return named.IntVal, typ, path, how + named.String()
	}
	for _, cp := range ctr.Ports {
		if cp.Name == named.StrVal {
			return cp.ContainerPort, typ, path, fmt.Sprintf("%s%s (%d)", how, named.StrVal, cp.ContainerPort)
		}
	}
	return 0, typ, path, how + named.StrVal + ", a name no container port has"
}
