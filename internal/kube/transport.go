package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// finalDrops makes a dropped connection a final error instead of a retried one. client-go retries a GET that
// fails with a reset or an EOF up to ten times, one second apart: right while an API server restarts, but
// during a control-plane scenario, where the API server is down on purpose, every check and status read would
// stall for ten seconds before it could say so. The new error keeps the cause's text but neither its type nor
// the phrases client-go retries on.
type finalDrops struct{ next http.RoundTripper }

func (t finalDrops) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil && (utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)) {
		return nil, errors.New("the API server dropped the connection (" + defuse(err.Error()) + ")")
	}
	return resp, err
}

// WrappedRoundTripper lets client-go reach the transport beneath to cancel a request (a watch that is stopped);
// without it client-go logs "unable to cancel request" for every watch a wait ends.
func (t finalDrops) WrappedRoundTripper() http.RoundTripper { return t.next }

var _ utilnet.RoundTripperWrapper = finalDrops{}

// defuse rewrites the phrases client-go treats as retryable.
func defuse(msg string) string {
	return strings.NewReplacer("connection reset by peer", "connection reset", "EOF", "end of stream",
		"use of closed network connection", "closed connection", "GOAWAY", "go-away").Replace(msg)
}

// requestTimeout bounds every request but a watch. rest.Config's Timeout is the http.Client's, which also
// ends every watch after it (lab's waits then reopened their watches every 30 s); a watch lives as long as
// the context of the wait that opened it.
type requestTimeout struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t requestTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	// The deadline covers reading the body too, as the client's Timeout did; closing it releases the timer.
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func (t requestTimeout) WrappedRoundTripper() http.RoundTripper { return t.next }

var _ utilnet.RoundTripperWrapper = requestTimeout{}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
