package class

import (
	"embed"
	"net/http"
)

// webFiles is the scoreboard page: plain HTML, CSS and JavaScript, so the binary needs no build step.
//
//go:embed web
var webFiles embed.FS

// pageHandler serves the scoreboard at / and its assets under /web/. The policy allows only this origin's
// files, so a learner's name could never run as script even if the page rendered it carelessly.
func pageHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, webFiles, "web/index.html")
	})
	mux.Handle("GET /web/", http.FileServerFS(webFiles))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}
