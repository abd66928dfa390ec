// Package static holds the console's stylesheet, script and icon,
// embedded in the binary and served under content-hashed URLs
// (/static/app.3f2a9c1b.css), so that browsers may cache them for a year
// and a new build is fetched at once.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed app.css app.js docs.css favicon.svg
var files embed.FS

// Prefix is the URL path the files are served under.
const Prefix = "/static/"

type asset struct {
	body  []byte
	ctype string
	url   string
}

// assets maps a file name to its content, and hashed names to the name.
var (
	assets = map[string]asset{}
	hashed = map[string]string{}
)

func init() {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic("static: " + err.Error())
	}
	for _, e := range entries {
		body, err := files.ReadFile(e.Name())
		if err != nil {
			panic("static: " + err.Error())
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(e.Name())
		name := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:])[:12] + ext
		ctype := mime.TypeByExtension(ext)
		if ext == ".svg" {
			ctype = "image/svg+xml"
		}
		assets[e.Name()] = asset{body: body, ctype: ctype, url: Prefix + name}
		hashed[name] = e.Name()
	}
}

// URL returns the content-hashed URL of an embedded file ("app.css"). It
// panics for a file that is not embedded: a typo in a template must fail
// the first test that renders it.
func URL(name string) string {
	a, ok := assets[name]
	if !ok {
		panic("static: no file " + name)
	}
	return a.url
}

// Handler serves GET /static/{hashed name}: the file with a year-long
// immutable cache lifetime. An unknown or outdated hash is 404.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := hashed[strings.TrimPrefix(r.URL.Path, Prefix)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		a := assets[name]
		w.Header().Set("Content-Type", a.ctype)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(a.body)
	})
}
