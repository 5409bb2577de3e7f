package examweb

import (
	"embed"
	"io/fs"
)

// webFiles is the page: its own HTML, CSS and JavaScript, and under web/vendor the xterm.js files `make web`
// fetches from npm (not committed; a README there keeps the folder, so a build without them compiles).
//
//go:embed web
var webFiles embed.FS

// xtermFiles are the files `make web` puts in web/vendor.
var xtermFiles = []string{"web/vendor/xterm.js", "web/vendor/xterm.css", "web/vendor/addon-fit.js"}

// Assets reports whether this build embeds xterm.js: without it the page works, but has no terminal.
func Assets() bool {
	for _, f := range xtermFiles {
		if _, err := fs.Stat(webFiles, f); err != nil {
			return false
		}
	}
	return true
}

// NoAssets says what a build without xterm.js lacks and how to get it.
const NoAssets = "this build of lab has no xterm.js, so the exam page has no terminal: run `make web`, then `make build` (use `lab exam shell` meanwhile)"
