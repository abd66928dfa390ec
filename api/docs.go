package api

import (
	"bytes"
	"context"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/docent-hq/docent/connectors"
)

// Docs renders markdown from local sources as HTML pages, so that citations
// of the bundled handbook and of local folders link somewhere real. It
// serves only documents that are live in the index's registry: never a
// file the source did not index (excluded paths, binaries), and never a
// hidden path (dot-files and dot-folders), whatever the registry says.
// What it reads is up to the file system it is given: give folders as
// files.Dir, which stays inside the folder and refuses symbolic links.
type Docs struct {
	sources map[string]fs.FS
	live    LiveFunc
	md      goldmark.Markdown
}

// LiveFunc reports whether the document with this ID is indexed and live.
type LiveFunc func(ctx context.Context, docID string) (bool, error)

// maxDocBytes caps what one page render reads.
const maxDocBytes = 8 << 20

// NewDocs serves each named file system under /docs/{name}/, for the
// documents live reports as indexed.
func NewDocs(sources map[string]fs.FS, live LiveFunc) *Docs {
	return &Docs{
		sources: sources,
		live:    live,
		md: goldmark.New(
			goldmark.WithExtensions(extension.GFM),
			goldmark.WithParserOptions(parser.WithAutoHeadingID(), parser.WithAttribute()),
		),
	}
}

var docPage = template.Must(template.New("doc").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem}
pre{background:#f5f5f5;padding:.75rem;overflow:auto}.meta{color:#666}</style></head>
<body><p class="meta">{{.Source}} / {{.Path}}{{if .Updated}} · updated {{.Updated}}{{end}}</p>
{{.Body}}</body></html>`))

// ServeHTTP renders GET /docs/{source}/{path...}.
func (d *Docs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, p := r.PathValue("source"), path.Clean(r.PathValue("path"))
	fsys, ok := d.sources[name]
	if !ok || !fs.ValidPath(p) || connectors.Hidden(p) {
		http.NotFound(w, r)
		return
	}
	if live, err := d.live(r.Context(), name+":"+p); err != nil || !live {
		http.NotFound(w, r)
		return
	}
	raw, err := readCapped(fsys, p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	doc := connectors.ParseMarkdownWith(p, raw, connectors.FSIncluder(fsys, maxDocBytes))
	var body bytes.Buffer
	if !strings.HasSuffix(p, ".md") && !strings.HasSuffix(p, ".mdx") {
		body.WriteString("<pre>" + template.HTMLEscapeString(doc.Body) + "</pre>")
	} else if err := d.md.Convert([]byte(doc.Body), &body); err != nil {
		http.Error(w, "this document cannot be rendered", http.StatusUnprocessableEntity)
		return
	}
	updated := ""
	if !doc.Updated.IsZero() {
		updated = doc.Updated.Format("2006-01-02")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = docPage.Execute(w, map[string]any{
		"Title": doc.Title, "Source": name, "Path": p, "Updated": updated,
		"Body": template.HTML(body.String()), // goldmark escapes raw HTML by default (no WithUnsafe)
	})
}

// readCapped reads a regular file of at most maxDocBytes.
func readCapped(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxDocBytes {
		return nil, fs.ErrNotExist
	}
	return io.ReadAll(io.LimitReader(f, maxDocBytes))
}
