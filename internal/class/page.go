package class

import (
	"embed"
	"net/http"
)

// webFiles is the scoreboard page: plain HTML, CSS and JavaScript, so the binary needs no build step.
//
//go:embed web
var webFiles embed.FS

// pageHandler serves the scoreboard at /, the instructor's sign-in at /login and their assets under /web/. The
// policy allows only this origin's files, so a learner's name could never run as script even if the page
// rendered it carelessly, and no other site may frame the pages to trick a click.
func pageHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, webFiles, "web/index.html")
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, webFiles, "web/login.html")
	})
	mux.Handle("GET /web/", http.FileServerFS(webFiles))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}
