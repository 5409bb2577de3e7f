package class

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// apiError is the body of every error response: one line a CLI can print as it is.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// Errors are read by people, in a terminal: "<key>" stays as written.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	// The status is already sent; a client that went away is not worth reporting.
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, apiError{Error: fmt.Sprintf(format, args...)})
}

// decodeJSON reads exactly one JSON object of at most limit bytes into dst, refusing unknown fields so a
// misspelt field is an error rather than silently lost. On failure it has answered the request (413 or 400).
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", limit)
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "read request body: %v", err)
		return false
	}
	if err := strictJSON(body, dst); err != nil {
		writeError(w, http.StatusBadRequest, "malformed JSON: %v", err)
		return false
	}
	return true
}

// strictJSON decodes exactly one JSON value into dst, refusing unknown fields and anything after the value.
func strictJSON(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the object")
	}
	return nil
}

// bearer is the key presented in the Authorization header, or "".
func bearer(r *http.Request) string {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(key)
}
