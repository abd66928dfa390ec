package confluence_test

import (
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/confluence/confluencetest"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

// suiteMaxBytes is the page size limit of the suite's sources: a broken
// page is a page larger than it.
const suiteMaxBytes = 4096

// wikiBackend is a space on a fake Confluence that the suite edits: each
// key is a page, whose ID a rename (a move) keeps.
type wikiBackend struct {
	srv  *confluencetest.Server
	src  *confluence.Source
	keys map[string]string // suite key -> page ID
}

var _ connectorstest.Unreadable = (*wikiBackend)(nil)

func (b *wikiBackend) Source() connectors.Source { return b.src }

func (b *wikiBackend) ID(key string) string {
	if id, ok := b.keys[key]; ok {
		return b.src.Name() + ":" + id
	}
	return b.src.Name() + ":unknown-" + key
}

func (b *wikiBackend) Apply(t testing.TB, c connectorstest.Change) {
	b.srv.Tick(time.Hour)
	for from, to := range c.Rename {
		id := b.keys[from]
		delete(b.keys, from)
		b.keys[to] = id
		b.srv.Edit(id, func(p *confluencetest.Page) { p.ParentID = "" }) // moved: a new version
	}
	for _, key := range c.Remove {
		b.srv.Delete(b.keys[key])
		delete(b.keys, key)
	}
	for key, md := range c.Write {
		title, text, _ := strings.Cut(strings.TrimPrefix(md, "# "), "\n\n")
		b.write(key, title, "<p>"+html.EscapeString(strings.TrimSpace(text))+"</p>")
	}
	for _, key := range c.Break {
		b.write(key, "Broken", strings.Repeat("<p>Far too long for the limit.</p>", 2*suiteMaxBytes/30))
	}
}

func (b *wikiBackend) write(key, title, body string) {
	if id, ok := b.keys[key]; ok {
		b.srv.Edit(id, func(p *confluencetest.Page) { p.Title, p.Body = title, body })
		return
	}
	b.keys[key] = b.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: title, Body: body})
}

func (b *wikiBackend) SetUnreadable(t testing.TB, key string, on bool) {
	if on {
		b.srv.FailPage(b.keys[key], http.StatusInternalServerError, -1)
	} else {
		b.srv.FailPage(b.keys[key], 0, 0)
	}
}

// newSource returns a source named name over srv with the test's
// defaults: a fake clock, so retries never sleep.
func newSource(t testing.TB, name string, srv *confluencetest.Server, mod func(*confluence.Options)) *confluence.Source {
	t.Helper()
	opts := confluence.Options{
		BaseURL: srv.URL, Flavor: confluence.Flavor(srv.Flavor), Email: confluencetest.Email, Token: confluencetest.Token,
		Spaces: []string{"ENG"}, Clock: connectorstest.NewClock(confluencetest.Start),
	}
	if mod != nil {
		mod(&opts)
	}
	src, err := confluence.New(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestSourceSuite runs the Source contract suite over both flavors: every
// listing names every page (the cheap ID listing), listings from a cursor
// fetch only what changed, and a page whose requests fail is retried.
func TestSourceSuite(t *testing.T) {
	for _, flavor := range []confluencetest.Flavor{confluencetest.Cloud, confluencetest.DataCenter} {
		t.Run(string(flavor), func(t *testing.T) {
			connectorstest.RunSourceSuite(t, connectorstest.Harness{
				New: func(t *testing.T, name string) connectorstest.Backend {
					srv := confluencetest.New(t, flavor, "ENG")
					src := newSource(t, name, srv, func(o *confluence.Options) {
						o.MaxBytes = suiteMaxBytes
						// The suite wants exactly the changes: no overlap window
						// (TestOverlapWindow covers it).
						o.Overlap = -1
					})
					return &wikiBackend{srv: srv, src: src, keys: map[string]string{}}
				},
				Capabilities: connectorstest.Capabilities{Incremental: true, ListsAllIDs: true, TransientFailures: true},
			})
		})
	}
}
