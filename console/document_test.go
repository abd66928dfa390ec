package console

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent"
)

// TestDocumentPages: the sources page links each source's documents, and
// a document's page shows every chunk as indexed (section, deep link,
// text); the last run's content counts and warnings are on the sources
// page.
func TestDocumentPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.client()
	c.login()

	row := c.get("/sources").doc.Find(`[data-testid=source-row][data-source=handbook]`)
	if href, _ := row.Find(`[data-testid=source-docs] a`).Attr("href"); href != "/sources/handbook/documents" {
		t.Fatalf("documents link = %q", href)
	}
	list := c.get("/sources/handbook/documents")
	rows := list.doc.Find(`[data-testid=document-row]`)
	if rows.Length() != 5 {
		t.Fatalf("%d document rows, want 5", rows.Length())
	}
	var vpn string
	rows.Each(func(_ int, r *goquery.Selection) {
		if strings.Contains(text(r), "it/vpn.md") {
			vpn, _ = r.Find("a").Attr("href")
		}
	})
	if vpn != "/document?id=handbook%3Ait%2Fvpn.md" {
		t.Fatalf("vpn link = %q", vpn)
	}
	doc := c.get(vpn)
	if doc.StatusCode != http.StatusOK {
		t.Fatalf("document page = %d", doc.StatusCode)
	}
	chunks := doc.doc.Find(`[data-testid=chunk]`)
	if chunks.Length() != 1 || text(doc.doc.Find(`[data-testid=chunk-count]`)) != "1 chunks" {
		t.Fatalf("%d chunks shown", chunks.Length())
	}
	if got := text(chunks.Find(`[data-testid=chunk-section]`)); got != "Resetting your token" {
		t.Errorf("section = %q", got)
	}
	if href, _ := chunks.Find(`[data-testid=chunk-url]`).Attr("href"); href != "http://localhost:8080/docs/handbook/it/vpn.md#resetting-your-token" {
		t.Errorf("chunk link = %q", href)
	}
	if got := chunks.Find(`[data-testid=chunk-text]`).Text(); !strings.Contains(got, "Error VPN-E12 means the token expired.") ||
		!strings.HasPrefix(got, "VPN > Resetting your token\n\n") {
		t.Errorf("chunk text = %q", got)
	}

	for path, want := range map[string]int{
		"/document?id=handbook:nope.md": http.StatusNotFound,
		"/document":                     http.StatusBadRequest,
		"/sources/nope/documents":       http.StatusNotFound,
	} {
		if r := c.get(path); r.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, r.StatusCode, want)
		}
	}

	// A run whose documents held markup without text and a broken front
	// matter: the counts and the warning, linked to the document.
	id, err := e.db.StartRun(ctx, "handbook")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.FinishRun(ctx, id, docent.RunResult{Source: "handbook", Content: docent.ContentCounts{
		Dropped: 3, Empty: 1, Fragments: 2,
		Warnings: []docent.DocError{{ID: "handbook:it/vpn.md", Err: "front matter not used (line 2); the body is indexed"}}}}); err != nil {
		t.Fatal(err)
	}
	content := c.get("/sources").doc.Find(`[data-testid=source-row][data-source=handbook] [data-testid=source-content]`)
	if got := text(content); !strings.Contains(got, "3 markup dropped · 1 empty · 2 fragments · 1 warnings") ||
		!strings.Contains(got, "front matter not used") {
		t.Errorf("content cell = %q", got)
	}
	if href, _ := content.Find("a").Attr("href"); href != vpn {
		t.Errorf("warning links %q, want %q", href, vpn)
	}
}
