package class

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// RequestTimeout bounds every request to the class server, so `lab check` never hangs on a server that left.
const RequestTimeout = 10 * time.Second

// JoinTimeout bounds a join, which in a shared-cluster class waits while the server creates the learner's
// namespace, RBAC and token on that cluster: longer than RequestTimeout, and longer than ProvisionTimeout.
const JoinTimeout = ProvisionTimeout + 30*time.Second

// Membership is what a learner's lab keeps after joining, to post results later without joining again.
type Membership struct {
	URL string `json:"url"`
	// Fingerprint pins the server's certificate (see HTTPClient); "" for a plain-HTTP class or a certificate
	// this machine trusts.
	Fingerprint string `json:"fingerprint,omitempty"`
	Name        string `json:"name"`
	LearnerKey  string `json:"learnerKey"`
	// ClassID is the class joined: every result is signed for it.
	ClassID string `json:"classId"`
	// Workspace is set in a shared-cluster class: the learner's namespace and credentials.
	Workspace *Workspace `json:"workspace,omitempty"`
}

// Client talks to one class server as one learner.
type Client struct {
	m    Membership
	http *http.Client
}

// NewClient resumes a saved membership without contacting the server.
func NewClient(m Membership) *Client {
	return &Client{m: m, http: HTTPClient(m.Fingerprint)}
}

// Join joins the class at m.URL under m.Name with the class token the instructor showed, pinning the server's
// certificate to m.Fingerprint when set. With m.LearnerKey (a saved membership's) it takes a learner back in
// under the name the key holds.
func Join(ctx context.Context, m Membership, token string) (*Client, Plan, error) {
	base, err := normalizeURL(m.URL)
	if err != nil {
		return nil, Plan{}, err
	}
	if m.Fingerprint != "" {
		if m.Fingerprint, err = ParseFingerprint(m.Fingerprint); err != nil {
			return nil, Plan{}, err
		}
		if !strings.HasPrefix(base, "https://") {
			return nil, Plan{}, fmt.Errorf("class server address %s is plain http, where a fingerprint pins nothing: use the https address of the join command", base)
		}
	}
	c := NewClient(Membership{URL: base, Fingerprint: m.Fingerprint, Name: m.Name, LearnerKey: m.LearnerKey})
	var resp joinResponse
	err = c.call(ctx, JoinTimeout, http.MethodPost, "/api/join", "", joinRequest{Name: m.Name, Token: token, LearnerKey: m.LearnerKey, Version: labVersion()}, &resp)
	var se *statusError
	if errors.As(err, &se) {
		if se.status == http.StatusUnauthorized {
			return nil, Plan{}, fmt.Errorf("class server at %s refused the token: ask your instructor for the join command", base)
		}
		return nil, Plan{}, fmt.Errorf("class server at %s refused to let %s join: %s", base, m.Name, se.msg)
	}
	if err != nil {
		return nil, Plan{}, err
	}
	// A server of another version that let this lab in anyway runs checks this lab does not know.
	if resp.Version != labVersion() {
		return nil, Plan{}, fmt.Errorf("class server at %s runs lab %s and this is lab %s: install lab %s and join again", base, cmp.Or(resp.Version, "older"), labVersion(), cmp.Or(resp.Version, "of your instructor's version"))
	}
	ws, err := safeWorkspace(resp.Workspace, resp.Name)
	if err != nil {
		return nil, Plan{}, fmt.Errorf("class server at %s sent shared-cluster credentials lab does not accept: %w; ask your instructor", base, err)
	}
	c.m.Name, c.m.LearnerKey, c.m.Workspace, c.m.ClassID = resp.Name, resp.LearnerKey, ws, resp.Plan.ClassID
	return c, resp.local(time.Now()), nil
}

// Membership is what to save so NewClient can resume later.
func (c *Client) Membership() Membership { return c.m }

// Post signs and sends one result; an empty Learner is filled with the learner's name.
func (c *Client) Post(ctx context.Context, r Result) error {
	if r.Learner == "" {
		r.Learner = c.m.Name
	}
	r.Checks = slices.Clone(r.Checks)
	for i := range r.Checks {
		r.Checks[i].Evidence = clip(r.Checks[i].Evidence, maxEvidence)
	}
	signed, err := sign(report{ClassID: c.m.ClassID, Nonce: newNonce(), Result: r}, c.m.LearnerKey)
	if err != nil {
		return err
	}
	err = c.call(ctx, RequestTimeout, http.MethodPost, "/api/results", c.m.LearnerKey, signed, nil)
	var se *statusError
	if errors.As(err, &se) {
		if se.status == http.StatusUnauthorized {
			return fmt.Errorf("class server at %s does not know %s: join the class again", c.m.URL, c.m.Name)
		}
		return fmt.Errorf("class server at %s refused the result for %s: %s", c.m.URL, r.Scenario, se.msg)
	}
	return err
}

// Leave tells the server the learner left, which revokes their key and, on a shared cluster, their credentials
// there. A key the server refuses already (revoked, or the class ended) has nothing left to revoke.
func (c *Client) Leave(ctx context.Context) error {
	err := c.call(ctx, JoinTimeout, http.MethodPost, "/api/leave", c.m.LearnerKey, struct{}{}, nil)
	var se *statusError
	if errors.As(err, &se) && (se.status == http.StatusUnauthorized || se.status == http.StatusGone) {
		return nil
	}
	return err
}

// clip shortens s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Plan fetches the class plan, with times translated to this machine's clock so that TimeLeft(time.Now())
// is right even when the learner's clock disagrees with the instructor's.
func (c *Client) Plan(ctx context.Context) (Plan, error) {
	var st planState
	if err := c.call(ctx, RequestTimeout, http.MethodGet, "/api/plan", "", nil, &st); err != nil {
		return Plan{}, err
	}
	return st.local(time.Now()), nil
}

// local shifts the plan's times by the difference between this machine's clock and the server's.
func (st planState) local(received time.Time) Plan {
	p := st.Plan
	skew := received.Sub(st.ServerTime)
	p.StartedAt = p.StartedAt.Add(skew)
	if !p.PausedAt.IsZero() {
		p.PausedAt = p.PausedAt.Add(skew)
	}
	return p
}

// statusError is a refusal from the server, carrying its one-line reason.
type statusError struct {
	url    string
	status int
	msg    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("class server at %s answered %d: %s", e.url, e.status, e.msg)
}

// call sends one JSON request within timeout and decodes the JSON answer into out, when given.
func (c *Client) call(ctx context.Context, timeout time.Duration, method, path, key string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request to class server: %w", err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.m.URL+path, body)
	if err != nil {
		return fmt.Errorf("class server address %s: %w", c.m.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return c.transportError(ctx, err)
	}
	if resp.StatusCode >= 300 {
		var e apiError
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return &statusError{url: c.m.URL, status: resp.StatusCode, msg: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("class server at %s sent an unreadable answer (is that address a lab class server?): %w", c.m.URL, err)
	}
	return nil
}

func (c *Client) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("class server at %s did not answer in time: check the address and your network", c.m.URL)
	}
	if tlsErr := tlsError(err, c.m.URL); tlsErr != nil {
		return tlsErr
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("cannot reach class server at %s (is it running, and are you on its network?): %w", c.m.URL, err)
}

// normalizeURL accepts what a learner types: "192.168.1.20:8787" (https, as a class server serves by default)
// as well as "https://192.168.1.20:8787/".
func normalizeURL(raw string) (string, error) {
	raw = strings.TrimRight(strings.TrimSpace(raw), "/")
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("class server address %q is not a URL like https://192.168.1.20:8787", raw)
	}
	return raw, nil
}
