package class

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestClientErrorsAreOneClearLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A port nobody listens on: take a free one and close it.
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	_, _, err = Join(ctx, Membership{URL: closed, Name: "alice"}, "token")
	wantOneLine(t, err, "cannot reach class server at https://"+closed)

	// A server that accepts and never answers.
	silent, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = silent.Close() }()
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	err = NewClient(Membership{URL: "http://" + silent.Addr().String(), Name: "alice", LearnerKey: "k"}).Post(short, Result{Scenario: "s", Event: EventStart})
	wantOneLine(t, err, "did not answer in time")

	_, _, err = Join(ctx, Membership{URL: "ftp://example", Name: "alice"}, "token")
	wantOneLine(t, err, "is not a URL like https://")
}

func wantOneLine(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: want one line containing %q", err, want)
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"192.168.1.20:8787":           "https://192.168.1.20:8787",
		" http://192.168.1.20:8787/ ": "http://192.168.1.20:8787",
		"https://class.lan":           "https://class.lan",
	} {
		if got, err := normalizeURL(in); err != nil || got != want {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestLanURL(t *testing.T) {
	if got := lanURL(t.Context(), "https", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8787}); got != "https://10.0.0.5:8787" {
		t.Errorf("bound address: %s", got)
	}
	got := lanURL(t.Context(), "https", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8787})
	if strings.Contains(got, "[::]") || strings.Contains(got, "0.0.0.0") || !strings.HasSuffix(got, ":8787") {
		t.Errorf("wildcard bind must name a reachable address: %s", got)
	}
	for name, virtual := range map[string]bool{"docker0": true, "br-1a2b": true, "veth12": true, "eth0": false, "wlp2s0": false} {
		if virtualInterface(name) != virtual {
			t.Errorf("virtualInterface(%q) = %v", name, !virtual)
		}
	}
}
