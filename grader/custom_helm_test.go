package grader

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"testing"
)

// A release record as Helm writes it: JSON, gzipped, base64-encoded (and base64 again by the Secret's API).
func TestDecodeRelease(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write([]byte(`{"name":"web","info":{"status":"deployed"},"chart":{"metadata":{"name":"web","version":"1.4.0"}},"manifest":"---\nkind: Service\n","version":3,"apply_method":"ssa"}`))
	_ = zw.Close()
	r, err := decodeRelease([]byte(base64.StdEncoding.EncodeToString(z.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "web" || r.Info.Status != "deployed" || r.Chart.Metadata.Version != "1.4.0" || r.Version != 3 || r.Manifest == "" {
		t.Errorf("decoded %+v", r)
	}
	if _, err := decodeRelease([]byte("not base64!")); err == nil {
		t.Error("a record that is not base64 decoded")
	}
}
