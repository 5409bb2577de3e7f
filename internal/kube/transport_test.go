package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// A dropped connection must not look retryable to client-go once wrapped, as http.Client wraps it.
func TestFinalDropsAreNotRetryable(t *testing.T) {
	for _, cause := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, errors.New("read tcp: connection reset by peer")} {
		_, err := finalDrops{next: failing{cause}}.RoundTrip(&http.Request{})
		if err == nil {
			t.Fatalf("%v: no error", cause)
		}
		wrapped := &url.Error{Op: "Get", URL: "https://127.0.0.1", Err: err}
		if utilnet.IsConnectionReset(wrapped) || utilnet.IsProbableEOF(wrapped) || utilnet.IsHTTP2ConnectionLost(wrapped) {
			t.Errorf("%v: still retryable: %v", cause, wrapped)
		}
	}
	refused := errors.New("dial tcp: connection refused")
	if _, err := (finalDrops{next: failing{refused}}).RoundTrip(&http.Request{}); err != refused {
		t.Errorf("other errors must pass unchanged, got %v", err)
	}
}

// A watch outlives the request timeout; any other request is cut by it.
func TestRequestTimeoutSparesWatches(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(300 * time.Millisecond):
			_, _ = io.WriteString(w, "done")
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: requestTimeout{next: http.DefaultTransport, timeout: 100 * time.Millisecond}}
	get := func(query string) (string, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1/pods"+query, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get("?watch=true"); err != nil || body != "done" {
		t.Errorf("watch: %q, %v; want it to outlive the request timeout", body, err)
	}
	if _, err := get(""); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("list: %v; want the request timeout", err)
	}
}

func TestLabClientsPrintNoWarnings(t *testing.T) {
	c, err := FromConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Config.WarningHandler.(rest.NoWarnings); !ok {
		t.Errorf("warning handler %T: client-go's default prints every deprecation warning to stderr", c.Config.WarningHandler)
	}
}
