package class

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
)

// A learner's lab signs every result it posts with a key derived from the learner's join secret (the learner
// key the server issued at join), over the exact bytes it sends. The server keeps the derived key, not the
// learner key, so its data file cannot authenticate as anyone; and a result changed on the way, posted under
// another key, or replayed (each carries a nonce the server remembers) is refused.

// report is what a learner's lab signs: one result for one class, with a nonce that makes it unique.
type report struct {
	ClassID string `json:"classId"`
	Nonce   string `json:"nonce"`
	Result  Result `json:"result"`
}

// signedReport is the body of POST /api/results: the report's bytes as signed, and the signature.
type signedReport struct {
	Report    json.RawMessage `json:"report"`
	Signature string          `json:"signature"`
}

// noncePattern is what newNonce makes; anything else is not a lab's nonce.
var noncePattern = regexp.MustCompile(`^[A-Z2-7]{26}$`)

func newNonce() string { return rand.Text() }

// signingKey derives the key results are signed with from a learner key.
func signingKey(learnerKey string) []byte {
	m := hmac.New(sha256.New, []byte(learnerKey))
	m.Write([]byte("lab class result signing key"))
	return m.Sum(nil)
}

func signature(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// sign encodes a report and signs it for learnerKey.
func sign(r report, learnerKey string) (signedReport, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return signedReport{}, fmt.Errorf("encode result: %w", err)
	}
	return signedReport{Report: body, Signature: signature(signingKey(learnerKey), body)}, nil
}

// verify reports whether the signature is the one key makes over the report's bytes.
func (s signedReport) verify(key []byte) bool {
	got, err := hex.DecodeString(s.Signature)
	if err != nil {
		return false
	}
	want, _ := hex.DecodeString(signature(key, s.Report))
	return hmac.Equal(got, want)
}
