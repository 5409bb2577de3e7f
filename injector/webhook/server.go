package webhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultAddr is where the webhook listens; the Service maps port 443 to it.
const DefaultAddr = ":8443"

// maxReviewBytes bounds a request body: an AdmissionReview holds at most an
// object and its old version, each under etcd's 1.5 MiB limit.
const maxReviewBytes = 4 << 20

// shutdownGrace is how long in-flight reviews may finish after ctx ends; it
// stays below the Pod's default 30s termination grace period.
const shutdownGrace = 10 * time.Second

// ServeOptions configures Serve; they mirror the flags of `lab webhook serve`.
type ServeOptions struct {
	Addr     string // listen address, DefaultAddr when empty
	CertFile string // PEM serving certificate
	KeyFile  string // PEM private key
	Policy   string // policy in the form ParsePolicy accepts
}

// Serve runs the webhook over HTTPS until ctx is cancelled, then shuts down
// gracefully so a rolling Pod does not fail in-flight API requests.
func Serve(ctx context.Context, o ServeOptions) error {
	p, err := ParsePolicy(o.Policy)
	if err != nil {
		return fmt.Errorf("webhook serve: %w", err)
	}
	if o.CertFile == "" || o.KeyFile == "" {
		return errors.New("webhook serve: a certificate and a key file are required")
	}
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return fmt.Errorf("webhook serve: load TLS key pair: %w", err)
	}
	addr := o.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("webhook serve: %w", err)
	}
	logger := log.New(os.Stderr, "webhook: ", log.LstdFlags)
	srv := &http.Server{
		Handler:           NewHandler(p, os.Stderr),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          logger,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	logger.Printf("serving policy %s on %s", p.Name(), ln.Addr())

	select {
	case err := <-errc:
		return fmt.Errorf("webhook serve: %w", err)
	case <-ctx.Done():
	}
	// ctx is done: the shutdown gets a deadline of its own, not ctx's cancellation.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("webhook serve: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("webhook serve: %w", err)
	}
	logger.Print("stopped")
	return nil
}

// NewHandler serves POST /validate (admission.k8s.io/v1 AdmissionReview), POST
// /mutate for a Mutator, and GET /healthz, logging one line per decision to logw. It is separate from
// Serve so it can be tested over httptest's TLS server.
func NewHandler(p Policy, logw io.Writer) http.Handler {
	logger := log.New(logw, "webhook: ", log.LstdFlags)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("POST /validate", func(w http.ResponseWriter, r *http.Request) {
		req, err := readReview(w, r)
		if err != nil {
			logger.Printf("bad request from %s: %v", r.RemoteAddr, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		allowed, msg := p.Review(req)
		resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: allowed}
		verdict := "ALLOW"
		if !allowed {
			verdict = "DENY"
			resp.Result = &metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    http.StatusForbidden,
				Reason:  metav1.StatusReasonForbidden,
				Message: msg,
			}
		}
		line := fmt.Sprintf("%s %s %s %s/%s uid=%s", verdict, req.Operation, req.Kind.Kind, req.Namespace, req.Name, req.UID)
		if msg != "" {
			line += ": " + msg
		}
		logger.Print(line)
		writeReview(w, resp, logger)
	})
	if m, ok := p.(Mutator); ok {
		mux.HandleFunc("POST /mutate", func(w http.ResponseWriter, r *http.Request) { serveMutation(w, r, m, logger) })
	}
	return mux
}

// serveMutation answers a MutatingWebhookConfiguration's review with the policy's patch. A request the policy cannot
// decode is denied with the reason, as a validating policy would.
func serveMutation(w http.ResponseWriter, r *http.Request, m Mutator, logger *log.Logger) {
	req, err := readReview(w, r)
	if err != nil {
		logger.Printf("bad request from %s: %v", r.RemoteAddr, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	patch, err := m.Mutate(req)
	verdict := "UNCHANGED"
	switch {
	case err != nil:
		verdict = "DENY"
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: fmt.Sprintf("%v (policy %s)", err, m.Name())}
	case patch != nil:
		verdict = "PATCH"
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = patch, &pt
	}
	logger.Printf("%s %s %s %s/%s uid=%s", verdict, req.Operation, req.Kind.Kind, req.Namespace, req.Name, req.UID)
	writeReview(w, resp, logger)
}

// readReview decodes a v1 AdmissionReview; only v1 is registered in the
// ValidatingWebhookConfiguration, so anything else is a malformed request.
func readReview(w http.ResponseWriter, r *http.Request) (*admissionv1.AdmissionRequest, error) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReviewBytes)).Decode(&review); err != nil {
		return nil, fmt.Errorf("decode AdmissionReview: %w", err)
	}
	if gv := admissionv1.SchemeGroupVersion.String(); review.APIVersion != gv || review.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("want %s AdmissionReview, got %s %s", gv, review.APIVersion, review.Kind)
	}
	if review.Request == nil {
		return nil, errors.New("AdmissionReview has no request")
	}
	return review.Request, nil
}

// writeReview sends the review's response back to the API server.
func writeReview(w http.ResponseWriter, resp *admissionv1.AdmissionResponse, logger *log.Logger) {
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: resp,
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		logger.Printf("write response uid=%s: %v", resp.UID, err)
	}
}
