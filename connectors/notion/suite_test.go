package notion_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/notion"
	"github.com/docent-hq/docent/connectors/notion/notiontest"
)

// suiteMaxBytes is the page size limit of the suite's sources: a broken
// page is a page larger than it.
const suiteMaxBytes = 4096

// workspace is a fake Notion workspace that the suite edits: each key is
// a page, whose ID a rename (a move) keeps.
type workspace struct {
	srv  *notiontest.Server
	src  *notion.Source
	keys map[string]string
}

var _ connectorstest.Unreadable = (*workspace)(nil)

func (w *workspace) Source() connectors.Source { return w.src }

func (w *workspace) ID(key string) string {
	if id, ok := w.keys[key]; ok {
		return w.src.Name() + ":" + id
	}
	return w.src.Name() + ":unknown-" + key
}

func (w *workspace) Apply(t testing.TB, c connectorstest.Change) {
	w.srv.Tick(time.Hour)
	for from, to := range c.Rename {
		id := w.keys[from]
		delete(w.keys, from)
		w.keys[to] = id
		w.srv.Edit(id, func(p *notiontest.Page) { p.Parent = notiontest.Parent{Type: "workspace"} }) // moved
	}
	for _, key := range c.Remove {
		w.srv.Delete(w.keys[key])
		delete(w.keys, key)
	}
	for key, md := range c.Write {
		title, text, _ := strings.Cut(strings.TrimPrefix(md, "# "), "\n\n")
		w.write(key, title, []*notiontest.Block{notiontest.Paragraph(strings.TrimSpace(text))})
	}
	for _, key := range c.Break {
		var blocks []*notiontest.Block
		for range 2 * suiteMaxBytes / 30 {
			blocks = append(blocks, notiontest.Paragraph("Far too long for the limit."))
		}
		w.write(key, "Broken", blocks)
	}
}

func (w *workspace) write(key, title string, blocks []*notiontest.Block) {
	if id, ok := w.keys[key]; ok {
		w.srv.Edit(id, func(p *notiontest.Page) { p.Title, p.Blocks = title, blocks })
		return
	}
	w.keys[key] = w.srv.AddPage(notiontest.Page{Title: title, Blocks: blocks})
}

func (w *workspace) SetUnreadable(t testing.TB, key string, on bool) {
	if on {
		w.srv.FailPage(w.keys[key], http.StatusInternalServerError, -1)
	} else {
		w.srv.FailPage(w.keys[key], 0, 0)
	}
}

// newSource returns a source named name over srv with a fake clock, so
// that neither retries nor the rate limiter sleep.
func newSource(t testing.TB, name string, srv *notiontest.Server, clk *connectorstest.Clock, mod func(*notion.Options)) *notion.Source {
	t.Helper()
	if clk == nil {
		clk = connectorstest.NewClock(notiontest.Start)
	}
	opts := notion.Options{APIURL: srv.URL, Token: notiontest.Token, Clock: clk}
	if mod != nil {
		mod(&opts)
	}
	src, err := notion.New(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestSourceSuite runs the Source contract suite: every listing names
// every shared page (the search API), listings from a cursor fetch only
// the pages edited since, and a page whose blocks fail is retried.
func TestSourceSuite(t *testing.T) {
	connectorstest.RunSourceSuite(t, connectorstest.Harness{
		New: func(t *testing.T, name string) connectorstest.Backend {
			srv := notiontest.New(t)
			src := newSource(t, name, srv, nil, func(o *notion.Options) {
				o.MaxBytes = suiteMaxBytes
				o.Overlap = -1 // the suite wants exactly the changes (TestOverlapWindow covers the window)
			})
			return &workspace{srv: srv, src: src, keys: map[string]string{}}
		},
		Capabilities: connectorstest.Capabilities{Incremental: true, ListsAllIDs: true, TransientFailures: true},
	})
}
