package api

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent/connectors/files"
	staticpkg "github.com/docent-hq/docent/static"
)

func allLive(context.Context, string) (bool, error) { return true, nil }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDocsPageSwappedForPipe: a served page replaced by a named pipe is
// answered at once (404), for every one of many requests, where opening
// it would wait forever for a writer; the other pages still serve.
func TestDocsPageSwappedForPipe(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"ok.md": "# OK\n\nFine.\n", "page.md": "# Page\n\nSoon a pipe.\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docs := NewDocs(map[string]fs.FS{"local": files.Dir(dir)}, allLive, DocsOptions{})
	ts := newTestServer(t, nil, docs)
	if code, body := get(t, ts.URL+"/docs/local/page.md"); code != http.StatusOK || !strings.Contains(body, "Soon a pipe") {
		t.Fatalf("page before the swap = %d", code)
	}
	if err := os.Remove(filepath.Join(dir, "page.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "page.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 200
	codes := make(chan int, n)
	for range n {
		go func() {
			code, _ := get(t, ts.URL+"/docs/local/page.md")
			codes <- code
		}()
	}
	deadline := time.After(3 * time.Second)
	for range n {
		select {
		case code := <-codes:
			if code != http.StatusNotFound {
				t.Errorf("the pipe = %d, want 404", code)
			}
		case <-deadline:
			t.Fatal("requests for a page swapped for a named pipe did not all answer within 3s")
		}
	}
	if code, _ := get(t, ts.URL+"/docs/local/ok.md"); code != http.StatusOK {
		t.Errorf("another page after the pipe = %d", code)
	}
}

// gatedFS blocks every Open until the gate closes, and counts the opens
// in progress (the renders, which hold a slot) and the most at once.
type gatedFS struct {
	fs.FS
	gate       chan struct{}
	open, most atomic.Int64
}

func (g *gatedFS) Open(name string) (fs.File, error) {
	n := g.open.Add(1)
	defer g.open.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	<-g.gate
	return g.FS.Open(name)
}

// TestDocsRendersBounded: twenty requests at once start at most
// MaxRenders reads and renders; the rest are told to retry (503 with
// Retry-After) when MaxWait passes, and once the renders end, pages
// serve again.
func TestDocsRendersBounded(t *testing.T) {
	g := &gatedFS{FS: fstest.MapFS{"page.md": {Data: []byte("# Page\n\nA page.\n")}},
		gate: make(chan struct{})}
	docs := NewDocs(map[string]fs.FS{"hb": g}, allLive, DocsOptions{MaxRenders: 2, MaxWait: 300 * time.Millisecond})
	ts := newTestServer(t, nil, docs)
	const n = 20
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range n {
		wg.Go(func() {
			resp, err := http.Get(ts.URL + "/docs/hb/page.md")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
				refused.Add(1)
			}
		})
	}
	wg.Wait() // every request answered: none waits on the gate past MaxWait
	if most := g.most.Load(); most != 2 {
		t.Errorf("%d page reads at once, want MaxRenders (2)", most)
	}
	if refused.Load() != n {
		t.Errorf("%d of %d requests told to retry, want all (the gate held the renders)", refused.Load(), n)
	}
	close(g.gate)
	deadline := time.Now().Add(10 * time.Second)
	for len(docs.slots) > 0 && time.Now().Before(deadline) { // the held renders finish
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := get(t, ts.URL+"/docs/hb/page.md"); code != http.StatusOK || !strings.Contains(body, "<h1") {
		t.Errorf("page after the renders ended = %d", code)
	}
}

// TestDocsLargePageNotRendered: a page over MaxRenderBytes is shown as
// escaped text, not parsed as markdown.
func TestDocsLargePageNotRendered(t *testing.T) {
	body := "# Big\n\n" + strings.Repeat("| a | <b> |\n", 200)
	docs := NewDocs(map[string]fs.FS{"hb": fstest.MapFS{"big.md": {Data: []byte(body)}}}, allLive, DocsOptions{MaxRenderBytes: 1024})
	ts := newTestServer(t, nil, docs)
	code, page := get(t, ts.URL+"/docs/hb/big.md")
	if code != http.StatusOK || !strings.Contains(page, "<pre># Big") || strings.Contains(page, "<h1") || strings.Contains(page, "<b>") {
		t.Errorf("a page over the render cap = %d:\n%.300s", code, page)
	}
}

// TestDocsPageStyled: a page carries no inline style (the CSP, style-src
// 'self', would block it and the page would show unstyled) and links the
// embedded stylesheet and icon, which the static handler serves.
func TestDocsPageStyled(t *testing.T) {
	src := fstest.MapFS{"a.md": {Data: []byte("---\ntitle: A page\n---\n# A page\n\n| k | v |\n|---|---|\n| a | 1 |\n")}}
	ts := newTestServer(t, nil, NewDocs(map[string]fs.FS{"local": src}, allLive, DocsOptions{}))
	code, body := get(t, ts.URL+"/docs/local/a.md")
	if code != http.StatusOK {
		t.Fatalf("page = %d", code)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Find("style, [style]").Length(); n > 0 {
		t.Errorf("%d inline styles in the page:\n%s", n, body)
	}
	if doc.Find("table td").Length() != 2 {
		t.Errorf("table not rendered:\n%s", body)
	}
	static := httptest.NewServer(staticpkg.Handler())
	defer static.Close()
	for sel, name := range map[string]string{`link[rel=stylesheet]`: "docs.css", `link[rel=icon]`: "favicon.svg"} {
		href, _ := doc.Find(sel).Attr("href")
		if href != staticpkg.URL(name) {
			t.Errorf("%s href = %q, want %q", sel, href, staticpkg.URL(name))
			continue
		}
		if code, css := get(t, static.URL+href); code != http.StatusOK || css == "" {
			t.Errorf("GET %s = %d", href, code)
		}
	}
}
