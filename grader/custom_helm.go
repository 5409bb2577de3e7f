package grader

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cka-lab/lab/internal/manifest"
)

func init() {
	Register("helmRelease", helmRelease)
}

// release is what the grader reads of a Helm release record (Helm 3 and 4 store the same one, "helm.sh/release.v1").
type release struct {
	Name string `json:"name"`
	Info struct {
		Status string `json:"status"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"chart"`
	Manifest string `json:"manifest"`
	Version  int    `json:"version"`
}

// helmRelease: the release args.release in args.namespace is deployed at its latest revision, and what that
// revision's manifest states is live (a server-side dry-run apply of each object changes nothing), so the release
// stays the source of truth: a `kubectl set image` on its objects fails. minRevision, when set, is the least that
// revision may be (an uninstall and install starts again at 1, without the history); chart, when set, is the
// chart's name and version as helm lists it ("web-1.4.0").
func helmRelease(ctx context.Context, e Env, args map[string]string) Result {
	ns, name := args["namespace"], args["release"]
	secrets, err := e.Clients.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{"owner": "helm", "name": name}.String()})
	if err != nil {
		return e.fail("list the records of release %s in %s: %v", name, ns, err)
	}
	var latest *release
	for _, s := range secrets.Items {
		if s.Type != "helm.sh/release.v1" {
			continue
		}
		r, err := decodeRelease(s.Data["release"])
		if err != nil {
			return e.fail("release record %s in %s: %v", s.Name, ns, err)
		}
		if latest == nil || r.Version > latest.Version {
			latest = r
		}
	}
	if latest == nil {
		return e.fail("there is no Helm release %s in namespace %s (`helm list -n %s`)", name, ns, ns)
	}
	chart := latest.Chart.Metadata.Name + "-" + latest.Chart.Metadata.Version
	if latest.Info.Status != "deployed" {
		return e.fail("release %s in %s is %s at its latest revision %d, not deployed", name, ns, latest.Info.Status, latest.Version)
	}
	if want := args["chart"]; want != "" && chart != want {
		return e.fail("release %s in %s runs chart %s, want %s", name, ns, chart, want)
	}
	objs, err := manifest.Decode([]byte(latest.Manifest))
	if err != nil {
		return e.fail("the manifest of release %s revision %d does not decode: %v", name, latest.Version, err)
	}
	for _, o := range objs {
		if namespaced, err := e.Clients.Namespaced(o.GroupVersionKind()); err == nil && namespaced && o.GetNamespace() == "" {
			o.SetNamespace(ns)
		}
	}
	if why := liveAsStated(ctx, e, objs, fmt.Sprintf("revision %d of release %s states", latest.Version, name)); why != "" {
		return e.fail("%s (the release is the source of truth: change it with helm)", why)
	}
	if s := args["minRevision"]; s != "" {
		if least, err := strconv.Atoi(s); err == nil && latest.Version < least {
			return e.fail("release %s in %s is at revision %d, want %d or later: an uninstall and install starts again at 1, without the history", name, ns, latest.Version, least)
		}
	}
	return pass("release %s in %s is deployed at revision %d (chart %s), and its %d objects are live as its manifest states", name, ns, latest.Version, chart, len(objs))
}

// decodeRelease reads a release record as Helm stores it in a Secret: base64 of (gzipped) JSON.
func decodeRelease(data []byte) (*release, error) {
	b, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	var r release
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a release: %w", err)
	}
	return &r, nil
}
