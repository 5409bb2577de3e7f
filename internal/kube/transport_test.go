package kube

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"
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
