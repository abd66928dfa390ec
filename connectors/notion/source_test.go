package notion_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/notion"
	"github.com/docent-hq/docent/connectors/notion/notiontest"
)

// env is a fake Notion, a source over it, and the real engine with a
// SQLite registry, the local index and the real chunker.
type env struct {
	*connectorstest.Synced
	srv *notiontest.Server
	clk *connectorstest.Clock
}

func newEnv(t *testing.T, mod func(*notion.Options)) *env {
	t.Helper()
	e := &env{srv: notiontest.New(t), clk: connectorstest.NewClock(notiontest.Start)}
	e.Synced = connectorstest.NewSynced(t, newSource(t, "wiki", e.srv, e.clk, mod))
	return e
}

// addPages adds n top-level pages, an hour apart, and returns their IDs.
func (e *env) addPages(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		e.srv.Tick(time.Hour)
		ids[i] = e.srv.AddPage(notiontest.Page{Title: fmt.Sprintf("Page %03d", i), Blocks: []*notiontest.Block{
			notiontest.Heading(1, "Section"), notiontest.Paragraph(fmt.Sprintf("Body of page %d about topic %d.", i, i))}})
	}
	return ids
}

func docID(id string) string { return "wiki:" + id }

// TestMultiPageWorkspace lists a workspace over several search pages and
// a page whose blocks run over several pages of children, nested.
func TestMultiPageWorkspace(t *testing.T) {
	e := newEnv(t, nil)
	ids := e.addPages(230)
	var long []*notiontest.Block
	for i := range 150 {
		long = append(long, notiontest.Paragraph(fmt.Sprintf("Line %d of a long page.", i)))
	}
	long[10].Children = []*notiontest.Block{notiontest.Paragraph("Nested under line 10.")}
	longID := e.srv.AddPage(notiontest.Page{Title: "Long page", Blocks: long})

	res := e.Sync()
	if res.Added != 231 || res.Seen != 231 || res.Failed != 0 {
		t.Fatalf("first sync = %+v", res)
	}
	_, routes := e.srv.Requests()
	// Searches: databases 1, pages 3 (100 a page); children: 230 pages,
	// 2 for the long page, 1 for the nested block.
	if routes["search"] != 4 || routes["children"] != 233 {
		t.Errorf("requests %v; want 4 searches and 233 block-children requests", routes)
	}
	docs := e.Docs()
	for _, id := range append(ids, longID) {
		if _, ok := docs[docID(id)]; !ok {
			t.Errorf("page %s was not synced", id)
		}
	}
	col, _ := connectorstest.Collect(context.Background(), e.Src, "")
	i := slices.IndexFunc(col.Docs, func(d docent.Document) bool { return d.ID == docID(longID) })
	if i < 0 || !strings.Contains(col.Docs[i].Body, "Line 149 of a long page.") || !strings.Contains(col.Docs[i].Body, "Nested under line 10.") {
		t.Errorf("the long page lost blocks")
	}
	e.Converged()
}

// TestEditedPageIsRefetchedAlone edits one page of many: the next run
// fetches that page's blocks and re-embeds its chunks, nothing else.
func TestEditedPageIsRefetchedAlone(t *testing.T) {
	e := newEnv(t, nil)
	ids := e.addPages(30)
	e.Sync()
	e.srv.Tick(time.Hour)
	e.srv.Edit(ids[7], func(p *notiontest.Page) {
		p.Blocks = []*notiontest.Block{notiontest.Heading(1, "Section"), notiontest.Paragraph("Body of page 7, revised.")}
	})
	e.srv.ResetCounts()
	_, before := e.Emb.Calls()
	res := e.Sync()
	// The overlap window hands over the page edited last before the
	// previous run too (unchanged, so not re-embedded).
	if res.Updated != 1 || res.Unchanged != 1 || res.Seen != 30 || res.Failed != 0 {
		t.Errorf("run = %+v, want 1 updated and 1 unchanged of 30 seen", res)
	}
	if f := e.srv.Fetched(); len(f) != 2 || f[ids[7]] != 1 || f[ids[29]] != 1 {
		t.Errorf("pages fetched %v, want %s (edited) and %s (in the window)", f, ids[7], ids[29])
	}
	chunks, _ := e.Ch.Chunk(docent.Document{ID: docID(ids[7]), Title: "Page 007", Body: "# Section\n\nBody of page 7, revised.\n"})
	if _, after := e.Emb.Calls(); after-before != len(chunks) {
		t.Errorf("embedded %d texts, want the edited page's %d chunks", after-before, len(chunks))
	}
	e.Converged()
}

// TestDeletedAndUnsharedPagesGo: a deleted page and a page no longer
// shared with the integration leave the index and the registry in the
// next run; so does a page that answers 404 or 403 when its blocks are
// fetched.
func TestDeletedAndUnsharedPagesGo(t *testing.T) {
	e := newEnv(t, nil)
	ids := e.addPages(10)
	e.Sync()
	e.srv.Delete(ids[2])
	e.srv.Unshare(ids[5], true)
	if res := e.Sync(); res.Deleted != 2 || res.Failed != 0 {
		t.Errorf("run = %+v, want 2 deleted", res)
	}
	for _, id := range []string{ids[2], ids[5]} {
		if _, ok := e.Docs()[docID(id)]; ok {
			t.Errorf("page %s still in the registry", id)
		}
		if _, ok := e.Indexed()[docID(id)]; ok {
			t.Errorf("page %s still in the index", id)
		}
	}
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden} {
		e.srv.Tick(time.Hour)
		e.srv.Edit(ids[8], func(p *notiontest.Page) { p.Blocks = []*notiontest.Block{notiontest.Paragraph("Edited.")} })
		e.srv.FailPage(ids[8], status, -1)
		if res := e.Sync(); res.Deleted != 1 || res.Failed != 0 {
			t.Errorf("run after a %d = %+v, want 1 deleted", status, res)
		}
		e.srv.FailPage(ids[8], 0, 0)
		if res := e.Sync(); res.Added != 1 {
			t.Errorf("run after access came back = %+v, want it added", res)
		}
	}
}

// TestAuthFailsFast: a refused token fails the run at the first request,
// naming the source, never the token.
func TestAuthFailsFast(t *testing.T) {
	e := newEnv(t, func(o *notion.Options) { o.Token = "secret_wrong_token_123" })
	e.addPages(2)
	res, err := e.Eng.Sync(context.Background(), e.Src, nil)
	if !errors.Is(err, notion.ErrAuth) {
		t.Fatalf("sync error %v, want ErrAuth", err)
	}
	if total, _ := e.srv.Requests(); total != 1 {
		t.Errorf("%d requests, want 1", total)
	}
	run, _ := e.Reg.LastRun(context.Background(), "wiki")
	for _, msg := range []string{err.Error(), res.Err, run.Err} {
		if !strings.Contains(msg, `source "wiki"`) || !strings.Contains(msg, "401") || strings.Contains(msg, "secret_wrong_token_123") {
			t.Errorf("error %q: want the source and the refusal named, and no token", msg)
		}
	}
}

// TestRateLimitsAndRetries: Retry-After waits on the injected clock, five
// 500s then success complete the run, a page that always fails is
// reported and the rest completes, and the client keeps to 3 requests a
// second.
func TestRateLimitsAndRetries(t *testing.T) {
	e := newEnv(t, nil)
	ids := e.addPages(6)
	e.srv.Script(http.StatusTooManyRequests, http.Header{"Retry-After": {"2"}}, 1)
	res := e.Sync()
	if res.Added != 6 || res.RateLimited != 1 || res.Retries != 1 {
		t.Errorf("run after a 429 = %+v", res)
	}
	if !slices.Contains(e.clk.Sleeps(), 2*time.Second) {
		t.Errorf("slept %v, want a 2s wait among them", e.clk.Sleeps())
	}
	// The limiter: 3 a second, bursts of 3, so the run's requests span
	// at least (requests-3)/3 seconds of the fake clock, all of it spent
	// waiting (the Retry-After wait counts: the limiter fills up during it).
	if min := time.Duration(res.Requests-3) * time.Second / 3; res.Waited < min || res.Waited != e.clk.Now().Sub(notiontest.Start) {
		t.Errorf("waited %s over %d requests (clock moved %s), want at least %s: the client outpaces 3/s",
			res.Waited, res.Requests, e.clk.Now().Sub(notiontest.Start), min)
	}
	e.srv.ResetCounts()
	before := e.clk.Now()
	e.Sync() // a run without retries: the limiter alone
	if total, _ := e.srv.Requests(); e.clk.Now().Sub(before) < time.Duration(total-3)*time.Second/3 {
		t.Errorf("%d requests in %s of fake time: faster than 3/s", total, e.clk.Now().Sub(before))
	}

	e.srv.Tick(time.Hour)
	e.srv.Edit(ids[1], func(p *notiontest.Page) { p.Blocks = []*notiontest.Block{notiontest.Paragraph("Second.")} })
	e.srv.Script(http.StatusInternalServerError, nil, 5)
	if res := e.Sync(); res.Updated != 1 || res.Retries != 5 || res.Failed != 0 {
		t.Errorf("run after five 500s = %+v", res)
	}

	e.srv.Tick(time.Hour)
	e.srv.Edit(ids[2], func(p *notiontest.Page) { p.Blocks = []*notiontest.Block{notiontest.Paragraph("Third.")} })
	e.srv.Edit(ids[3], func(p *notiontest.Page) { p.Blocks = []*notiontest.Block{notiontest.Paragraph("Fine.")} })
	e.srv.FailPage(ids[2], http.StatusInternalServerError, -1)
	res = e.Sync()
	if res.Updated != 1 || res.Failed != 1 || res.Errors[0].ID != docID(ids[2]) || !res.Errors[0].Retry {
		t.Errorf("run with a failing page = %+v", res)
	}
	e.srv.FailPage(ids[2], 0, 0)
	if res := e.Sync(); res.Updated != 1 || res.Failed != 0 {
		t.Errorf("run after the page healed = %+v", res)
	}
	e.Converged()
}

// TestRootsAndDatabaseRows: with roots, only the root page's subtree and
// the root database's rows are synced; a row's properties become its
// labels, owner, space and a property list.
func TestRootsAndDatabaseRows(t *testing.T) {
	e := newEnv(t, nil)
	root := e.srv.AddPage(notiontest.Page{Title: "Engineering", Blocks: []*notiontest.Block{notiontest.Paragraph("Team home.")}})
	child := e.srv.AddPage(notiontest.Page{Title: "Runbooks", Parent: notiontest.Parent{Type: "page_id", ID: root},
		Blocks: []*notiontest.Block{notiontest.Paragraph("All runbooks.")}})
	holder := &notiontest.Block{Type: "toggle", Payload: map[string]any{"rich_text": []any{notiontest.Text("More")}},
		Children: []*notiontest.Block{}}
	e.srv.Edit(child, func(p *notiontest.Page) { p.Blocks = append(p.Blocks, holder) })
	inBlock := e.srv.AddPage(notiontest.Page{Title: "Deep page", Parent: notiontest.Parent{Type: "block_id", ID: holder.ID},
		Blocks: []*notiontest.Block{notiontest.Paragraph("Inside a toggle.")}})
	other := e.srv.AddPage(notiontest.Page{Title: "Marketing", Blocks: []*notiontest.Block{notiontest.Paragraph("Not ours.")}})
	db := e.srv.AddDatabase(notiontest.Database{Title: "Incidents"})
	row := e.srv.AddPage(notiontest.Page{Title: "Ledger outage", TitleProperty: "Name",
		Parent: notiontest.Parent{Type: "database_id", ID: db},
		Properties: map[string]any{
			"Status":   map[string]any{"id": "s", "type": "status", "status": map[string]any{"name": "Resolved"}},
			"Tags":     map[string]any{"id": "t", "type": "multi_select", "multi_select": []any{map[string]any{"name": "payments"}, map[string]any{"name": "sev1"}}},
			"Owner":    map[string]any{"id": "o", "type": "people", "people": []any{map[string]any{"object": "user", "id": "u1", "name": "Sam Lee"}}},
			"Duration": map[string]any{"id": "d", "type": "number", "number": 42},
			"Empty":    map[string]any{"id": "e", "type": "rich_text", "rich_text": []any{}},
		},
		Blocks: []*notiontest.Block{notiontest.Paragraph("Root cause: expired certificate.")}})
	e.Src = newSource(t, "wiki", e.srv, e.clk, func(o *notion.Options) {
		o.Roots = []string{"https://www.notion.so/Engineering-" + strings.ReplaceAll(root, "-", ""), db}
	})
	e.Sync()
	docs := e.Docs()
	for id, want := range map[string]bool{root: true, child: true, inBlock: true, other: false, row: true} {
		if _, ok := docs[docID(id)]; ok != want {
			t.Errorf("page %s synced = %v, want %v", id, ok, want)
		}
	}
	if got := docs[docID(inBlock)].Path; got != "Engineering > Runbooks > Deep page" {
		t.Errorf("path = %q", got)
	}
	col, _ := connectorstest.Collect(context.Background(), e.Src, "")
	i := slices.IndexFunc(col.Docs, func(d docent.Document) bool { return d.ID == docID(row) })
	if i < 0 {
		t.Fatal("row not listed")
	}
	d := col.Docs[i]
	if !slices.Equal(d.Labels, []string{"Resolved", "payments", "sev1"}) || d.Owner != "Sam Lee" || d.Space != "Incidents" ||
		d.Path != "Incidents > Ledger outage" || d.Author != "Dana Reyes" {
		t.Errorf("row document = %+v", d)
	}
	for _, want := range []string{"- **Duration:** 42", "- **Status:** Resolved", "- **Tags:** payments, sev1", "Root cause: expired certificate."} {
		if !strings.Contains(d.Body, want) {
			t.Errorf("row body lacks %q:\n%s", want, d.Body)
		}
	}
	if strings.Contains(d.Body, "Empty") {
		t.Errorf("a property without a value is listed:\n%s", d.Body)
	}
	_, routes := e.srv.Requests()
	if routes["query"] == 0 {
		t.Errorf("the root database's rows were not queried: %v", routes)
	}
}

// TestOverlapWindow: an edit search shows late, dated within the window,
// is fetched; a page the engine never received is fetched whatever its
// date.
func TestOverlapWindow(t *testing.T) {
	e := newEnv(t, nil)
	ids := e.addPages(5)
	e.Sync()
	newest := e.srv.Now()
	e.srv.Edit(ids[0], func(p *notiontest.Page) { p.Blocks = []*notiontest.Block{notiontest.Paragraph("Late edit.")} })
	e.srv.SetLastEdited(ids[0], newest.Add(-5*time.Minute))
	e.srv.Edit(ids[1], func(p *notiontest.Page) { p.Blocks = []*notiontest.Block{notiontest.Paragraph("Too late.")} })
	e.srv.SetLastEdited(ids[1], newest.Add(-time.Hour))
	old := e.srv.AddPage(notiontest.Page{Title: "Shared late", LastEdited: newest.Add(-48 * time.Hour),
		Blocks: []*notiontest.Block{notiontest.Paragraph("Old page, newly shared.")}})
	e.srv.ResetCounts()
	res := e.Sync()
	f := e.srv.Fetched()
	if f[ids[0]] != 1 || f[old] != 1 || f[ids[1]] != 0 || res.Updated != 1 || res.Added != 1 {
		t.Errorf("fetched %v, run %+v: want the late edit and the newly shared page, not the edit outside the window", f, res)
	}
}

// TestDocumentsAndAnchors: a page's document (URL, path, author, date)
// and chunk links that open the heading's block, on the golden page.
func TestDocumentsAndAnchors(t *testing.T) {
	e := newEnv(t, nil)
	data, err := os.ReadFile("testdata/convert/oncall-guide.json")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := notiontest.BlocksFromJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	parent := e.srv.AddPage(notiontest.Page{Title: "Payments", Blocks: []*notiontest.Block{notiontest.Paragraph("Team page.")}})
	id := e.srv.AddPage(notiontest.Page{Title: "On-call guide", Parent: notiontest.Parent{Type: "page_id", ID: parent}, Blocks: blocks})
	res := e.Sync()
	if res.Failed != 0 {
		t.Fatalf("sync = %+v", res)
	}
	rec := e.Docs()[docID(id)]
	p := e.srv.Page(id)
	if rec.Path != "Payments > On-call guide" || rec.Author != "Dana Reyes" || !rec.UpdatedAt.Equal(p.LastEdited) ||
		!strings.HasPrefix(rec.URL, "https://www.notion.so/On-call-guide-") {
		t.Errorf("record = %+v", rec)
	}
	anchors := map[string]string{}
	if err := e.Idx.Scan(context.Background(), func(c docent.Chunk) error {
		if c.DocID == docID(id) && len(c.Section) > 0 {
			anchors[c.Section[len(c.Section)-1]] = strings.TrimPrefix(c.URL, rec.URL)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var escalation string
	for _, b := range blocks {
		if b.Type == "heading_2" {
			escalation = "#" + strings.ReplaceAll(b.ID, "-", "")
		}
	}
	if anchors["Escalation"] != escalation || escalation == "" {
		t.Errorf("section anchors %v, want Escalation at %s", anchors, escalation)
	}
	e.Converged()
}

// TestSyncedBlockReference: a synced block that shows another page's
// block renders the original's content.
func TestSyncedBlockReference(t *testing.T) {
	e := newEnv(t, nil)
	original := &notiontest.Block{Type: "synced_block", Payload: map[string]any{"synced_from": nil},
		Children: []*notiontest.Block{notiontest.Paragraph("Shared paragraph from the original.")}}
	e.srv.AddPage(notiontest.Page{Title: "Source", Blocks: []*notiontest.Block{original}})
	ref := e.srv.AddPage(notiontest.Page{Title: "Copy", Blocks: []*notiontest.Block{{Type: "synced_block",
		Payload:  map[string]any{"synced_from": map[string]any{"type": "block_id", "block_id": original.ID}},
		Children: []*notiontest.Block{{Type: "paragraph", Payload: map[string]any{"rich_text": []any{}}}}}}})
	col, err := connectorstest.Collect(context.Background(), e.Src, "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(col.Docs, func(d docent.Document) bool { return d.ID == docID(ref) })
	if i < 0 || !strings.Contains(col.Docs[i].Body, "Shared paragraph from the original.") {
		t.Errorf("the synced copy does not show the original's content: %+v", col.Docs)
	}
}

// TestRequestCounts syncs a 1,000-page workspace fully, then after 5
// edits, and counts the requests the fake served (the README's figures).
//
//	go test ./connectors/notion -run RequestCounts -v
func TestRequestCounts(t *testing.T) {
	e := newEnv(t, nil)
	var ids []string
	for i := range 1000 {
		e.srv.Tick(time.Hour)
		ids = append(ids, e.srv.AddPage(notiontest.Page{Title: fmt.Sprintf("Page %04d", i),
			Blocks: []*notiontest.Block{notiontest.Paragraph(fmt.Sprintf("Page %d.", i))}}))
	}
	e.srv.ResetCounts()
	res := e.Sync()
	full, fullRoutes := e.srv.Requests()
	if res.Added != 1000 || res.Requests != full {
		t.Fatalf("full sync %+v; server saw %d", res, full)
	}
	e.srv.Tick(time.Hour)
	for _, i := range []int{3, 200, 450, 700, 999} {
		e.srv.Edit(ids[i], func(p *notiontest.Page) { p.Blocks = append(p.Blocks, notiontest.Paragraph("Edited.")) })
	}
	e.srv.ResetCounts()
	res = e.Sync()
	incr, incrRoutes := e.srv.Requests()
	if res.Updated != 5 || res.Seen != 1000 || res.Requests != incr {
		t.Fatalf("incremental sync %+v; server saw %d", res, incr)
	}
	t.Logf("notion, 1,000 pages: full sync %d requests %v (%s at 3/s); incremental (5 edits) %d requests %v",
		full, fullRoutes, (time.Duration(full) * time.Second / 3).Round(time.Second), incr, incrRoutes)
	// Full: searches 1 + 10, a page's blocks each, the editor's name once.
	// Incremental: searches 11, the 5 pages, the editor.
	if full > 1015 || incr > 20 {
		t.Errorf("full %d, incremental %d requests", full, incr)
	}
}

// TestSearchMissesAPage: search is not an exhaustive listing, so a held
// page that search leaves out is asked for by ID: one still there stays
// (and is synced when edited), one deleted or archived goes.
func TestSearchMissesAPage(t *testing.T) {
	e := newEnv(t, nil)
	ids := e.addPages(6)
	e.Sync()
	e.srv.Edit(ids[1], func(p *notiontest.Page) { p.Unsearchable = true })
	e.srv.Edit(ids[2], func(p *notiontest.Page) {
		p.Unsearchable = true
		p.Blocks = []*notiontest.Block{notiontest.Paragraph("Edited while search missed it.")}
	})
	e.srv.Edit(ids[3], func(p *notiontest.Page) { p.Archived = true })
	e.srv.Delete(ids[4])
	e.srv.ResetCounts()
	res := e.Sync()
	// Updated: the two pages search missed (both edited); unchanged: the
	// newest page, in the overlap window.
	if res.Deleted != 2 || res.Updated != 2 || res.Unchanged != 1 || res.Failed != 0 {
		t.Errorf("run = %+v, want the archived and the deleted page removed, the missed ones updated", res)
	}
	docs := e.Docs()
	for id, want := range map[string]bool{ids[1]: true, ids[2]: true, ids[3]: false, ids[4]: false} {
		if _, ok := docs[docID(id)]; ok != want {
			t.Errorf("page %s in the registry = %v, want %v", id, ok, want)
		}
	}
	if _, routes := e.srv.Requests(); routes["page"] != 4 {
		t.Errorf("asked for %d pages by ID, want the 4 held pages search left out", routes["page"])
	}
	if f := e.srv.Fetched(); f[ids[2]] != 1 || f[ids[1]] != 1 {
		// ids[1] was edited (made unsearchable) too, so both are refetched.
		t.Errorf("blocks fetched %v, want the edited pages search missed", f)
	}
}
