package api

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/parser"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/internal/mdsafe"
	"github.com/docent-hq/docent/static"
)

// Docs renders markdown from local sources as HTML pages, so that citations
// of the bundled handbook and of local folders link somewhere real. It
// serves only documents that are live in the index's registry: never a
// file the source did not index (excluded paths, binaries), and never a
// hidden path (dot-files and dot-folders), whatever the registry says.
// What it reads is up to the file system it is given: give folders as
// files.Dir, which stays inside the folder, refuses symbolic links and
// opens without blocking (a page swapped for a named pipe is a 404 at
// once, not a request that waits forever). Only a regular file is read,
// checked on the opened file.
//
// Rendering is bounded: at most DocsOptions.MaxRenders pages are read and
// rendered at once, a request waits at most MaxWait for its page (then
// 503 with Retry-After), a page larger than MaxRenderBytes is shown as
// plain text rather than rendered, and tables are mdsafe's, whose cells
// are bounded, so a pathological page costs a bounded amount of memory
// however many ask for it.
type Docs struct {
	sources map[string]fs.FS
	live    LiveFunc
	md      goldmark.Markdown
	opts    DocsOptions
	slots   chan struct{}
}

// DocsOptions bound what Docs does at once. Zero fields take the
// defaults.
type DocsOptions struct {
	// MaxRenders is how many pages are read and rendered at once;
	// default GOMAXPROCS.
	MaxRenders int
	// MaxWait is how long a request waits for a render slot and its
	// render; default 10s.
	MaxWait time.Duration
	// MaxRenderBytes is the largest page rendered as markdown; a larger
	// one is shown as preformatted text. Default 512 KiB.
	MaxRenderBytes int
	// Log receives the pages that took too long; nil discards.
	Log *slog.Logger
}

func (o DocsOptions) withDefaults() DocsOptions {
	if o.MaxRenders <= 0 {
		o.MaxRenders = runtime.GOMAXPROCS(0)
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 10 * time.Second
	}
	if o.MaxRenderBytes <= 0 {
		o.MaxRenderBytes = 512 << 10
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// LiveFunc reports whether the document with this ID is indexed and live.
type LiveFunc func(ctx context.Context, docID string) (bool, error)

// maxDocBytes caps what one page render reads.
const maxDocBytes = 8 << 20

// retryDocs is the Retry-After of a page that could not be rendered in
// time.
const retryDocs = 5 * time.Second

// NewDocs serves each named file system under /docs/{name}/, for the
// documents live reports as indexed.
func NewDocs(sources map[string]fs.FS, live LiveFunc, opts DocsOptions) *Docs {
	opts = opts.withDefaults()
	return &Docs{
		sources: sources,
		live:    live,
		md: goldmark.New(
			goldmark.WithExtensions(mdsafe.GFM),
			goldmark.WithParserOptions(parser.WithAutoHeadingID(), parser.WithAttribute()),
		),
		opts:  opts,
		slots: make(chan struct{}, opts.MaxRenders),
	}
}

// docPage is a rendered page. Its styles are a stylesheet of the
// embedded static files (the CSP allows no inline style).
var docPage = template.Must(template.New("doc").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{{.CSS}}"><link rel="icon" href="{{.Icon}}"></head>
<body><p class="meta">{{.Source}} / {{.Path}}{{if .Updated}} · updated {{.Updated}}{{end}}</p>
{{.Body}}</body></html>`))

// errNotRendered is a page that exists but cannot be rendered.
var errNotRendered = errors.New("api: docs: cannot be rendered")

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
	wait := time.NewTimer(d.opts.MaxWait)
	defer wait.Stop()
	busy := func(msg string) {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryDocs/time.Second)))
		http.Error(w, msg, http.StatusServiceUnavailable)
	}
	select {
	case d.slots <- struct{}{}:
	case <-wait.C:
		busy("too many pages are being rendered; retry shortly")
		return
	case <-r.Context().Done():
		return
	}
	// The render holds its slot until it ends, even when this request
	// stops waiting for it: slots bound the work, not the waiting.
	done := make(chan rendered, 1)
	go func() {
		defer func() { <-d.slots }()
		done <- d.render(fsys, name, p)
	}()
	select {
	case page := <-done:
		switch {
		case errors.Is(page.err, errNotRendered):
			http.Error(w, "this document cannot be rendered", http.StatusUnprocessableEntity)
		case page.err != nil:
			http.NotFound(w, r)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page.html)
		}
	case <-wait.C:
		d.opts.Log.WarnContext(r.Context(), "docs: page took too long to render", slog.String("source", name), slog.String("path", p))
		busy("this page takes too long to render; retry shortly")
	case <-r.Context().Done():
	}
}

// rendered is a page's HTML, or why there is none.
type rendered struct {
	html []byte
	err  error
}

// render reads and renders one page.
func (d *Docs) render(fsys fs.FS, name, p string) rendered {
	raw, err := connectors.ReadRegular(fsys, p, maxDocBytes)
	if err != nil {
		return rendered{err: err}
	}
	doc := connectors.ParseMarkdownWith(p, raw, connectors.FSIncluder(fsys, maxDocBytes))
	var body bytes.Buffer
	markdown := strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".mdx")
	if !markdown || len(doc.Body) > d.opts.MaxRenderBytes {
		body.WriteString("<pre>" + template.HTMLEscapeString(doc.Body) + "</pre>")
	} else if err := d.md.Convert([]byte(doc.Body), &body); err != nil {
		return rendered{err: errNotRendered}
	}
	updated := ""
	if !doc.Updated.IsZero() {
		updated = doc.Updated.Format("2006-01-02")
	}
	var out bytes.Buffer
	_ = docPage.Execute(&out, map[string]any{
		"Title": doc.Title, "Source": name, "Path": p, "Updated": updated,
		"CSS": static.URL("docs.css"), "Icon": static.URL("favicon.svg"),
		"Body": template.HTML(body.String()), // goldmark escapes raw HTML by default (no WithUnsafe)
	})
	return rendered{html: out.Bytes()}
}
