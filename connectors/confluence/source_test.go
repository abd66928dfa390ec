package confluence_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/confluence/confluencetest"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

var flavors = []confluencetest.Flavor{confluencetest.Cloud, confluencetest.DataCenter}

// env is a fake Confluence, a source over it, and the real engine with a
// SQLite registry, the local index and the real chunker.
type env struct {
	*connectorstest.Synced
	srv *confluencetest.Server
	clk *connectorstest.Clock
}

func newEnv(t *testing.T, flavor confluencetest.Flavor, mod func(*confluence.Options)) *env {
	t.Helper()
	e := &env{srv: confluencetest.New(t, flavor, "ENG", "HR"), clk: connectorstest.NewClock(confluencetest.Start)}
	e.Synced = connectorstest.NewSynced(t, newSource(t, "wiki", e.srv, func(o *confluence.Options) {
		o.Clock = e.clk
		if mod != nil {
			mod(o)
		}
	}))
	return e
}

// putPages adds n pages to space ENG, an hour apart, and returns their
// IDs.
func (e *env) putPages(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		e.srv.Tick(time.Hour)
		ids[i] = e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: fmt.Sprintf("Page %03d", i),
			Body: fmt.Sprintf("<h1>Section</h1><p>Body of page %d about topic %d.</p>", i, i)})
	}
	return ids
}

func docID(pageID string) string { return "wiki:" + pageID }

// TestMultiPageSpace lists a space over many requests of each kind: every
// page is synced, through cursor (Cloud) or offset (Data Center)
// pagination.
func TestMultiPageSpace(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, func(o *confluence.Options) { o.PageSize, o.BodyPageSize = 7, 5 })
			ids := e.putPages(52)
			res := e.Sync()
			if res.Added != 52 || res.Seen != 52 || res.Failed != 0 {
				t.Fatalf("first sync = %+v", res)
			}
			_, byRoute := e.srv.Requests()
			if byRoute["pages"] != 8 || byRoute["pages+body"] != 11 {
				t.Errorf("listing requests %v; want 8 without bodies (52/7) and 11 with (52/5)", byRoute)
			}
			docs := e.Docs()
			for _, id := range ids {
				if _, ok := docs[docID(id)]; !ok {
					t.Errorf("page %s was not synced", id)
				}
			}
			e.Converged()
			// The run records the requests it made: all the server saw
			// before Converged listed the space again.
			run, err := e.Reg.LastRun(context.Background(), "wiki")
			if err != nil || res.Requests != sum(byRoute) || run.Requests != res.Requests {
				t.Errorf("run recorded %d requests (stored %d, %v); the server saw %d", res.Requests, run.Requests, err, sum(byRoute))
			}
		})
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestEditedPageIsRefetchedAlone edits one page of many: the next run
// fetches that page's body and re-embeds its chunks, nothing else. (The
// page changed last before the previous run is fetched again too: it lies
// in the overlap window; unchanged, it is not re-embedded.)
func TestEditedPageIsRefetchedAlone(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, nil)
			ids := e.putPages(30)
			e.Sync()
			e.srv.Tick(time.Hour)
			e.srv.Edit(ids[7], func(p *confluencetest.Page) {
				p.Body = "<h1>Section</h1><p>Body of page 7, revised with a new paragraph.</p>"
			})
			e.srv.ResetCounts()
			_, textsBefore := e.Emb.Calls()

			res := e.Sync()
			if res.Updated != 1 || res.Unchanged != 1 || res.Added != 0 || res.Deleted != 0 || res.Seen != 30 || res.Failed != 0 {
				t.Errorf("run = %+v, want 1 updated and 1 unchanged (the overlap window) of 30 seen", res)
			}
			if bodies := e.srv.Bodies(); len(bodies) != 2 || bodies[ids[7]] != 1 || bodies[ids[29]] != 1 {
				t.Errorf("bodies fetched %v, want page %s (edited) and %s (in the overlap window) once each", bodies, ids[7], ids[29])
			}
			p, _ := e.srv.Get(ids[7])
			chunks, _ := e.Ch.Chunk(docent.Document{ID: docID(ids[7]), Title: p.Title, Body: "# Section\n\nBody of page 7, revised with a new paragraph.\n"})
			if _, texts := e.Emb.Calls(); texts-textsBefore != len(chunks) {
				t.Errorf("embedded %d texts, want the edited page's %d chunks", texts-textsBefore, len(chunks))
			}
			e.Converged()
		})
	}
}

// TestDeletedAndRestrictedPagesGo deletes one page and restricts another
// (a permission change, no new version): both leave the index and the
// registry in the next run; a page restricted between the listing and its
// fetch (403) goes too.
func TestDeletedAndRestrictedPagesGo(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, nil)
			ids := e.putPages(10)
			e.Sync()

			e.srv.Delete(ids[2])
			e.srv.Restrict(ids[5], true)
			res := e.Sync()
			if res.Deleted != 2 || res.Failed != 0 {
				t.Errorf("run = %+v, want 2 deleted", res)
			}
			for _, id := range []string{ids[2], ids[5]} {
				if _, ok := e.Docs()[docID(id)]; ok {
					t.Errorf("page %s is still in the registry", id)
				}
				if _, ok := e.Indexed()[docID(id)]; ok {
					t.Errorf("page %s is still in the index", id)
				}
			}

			// Edited, then restricted after the listing saw it: its fetch
			// answers 403.
			e.srv.Tick(time.Hour)
			e.srv.Edit(ids[8], func(p *confluencetest.Page) { p.Body = "<p>Edited.</p>" })
			e.srv.FailPage(ids[8], http.StatusForbidden, -1)
			res = e.Sync()
			if res.Deleted != 1 || res.Failed != 0 {
				t.Errorf("run after a 403 = %+v, want 1 deleted", res)
			}
			if _, ok := e.Docs()[docID(ids[8])]; ok {
				t.Errorf("the page that answered 403 is still in the registry")
			}

			// Permission restored: it comes back.
			e.srv.FailPage(ids[8], 0, 0)
			e.srv.Restrict(ids[5], false)
			res = e.Sync()
			if res.Added != 2 {
				t.Errorf("run after restoring access = %+v, want 2 added", res)
			}
		})
	}
}

// TestAuthFailsFast: refused credentials fail the run at the first
// request, with a message naming the source and never the token.
func TestAuthFailsFast(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, func(o *confluence.Options) { o.Token = "wrong-token-abc123" })
			e.putPages(3)
			res, err := e.Eng.Sync(context.Background(), e.Src, nil)
			if !errors.Is(err, confluence.ErrAuth) {
				t.Fatalf("sync error %v, want ErrAuth", err)
			}
			if total, _ := e.srv.Requests(); total != 1 {
				t.Errorf("%d requests, want 1: a refused credential is not retried", total)
			}
			run, _ := e.Reg.LastRun(context.Background(), "wiki")
			for _, msg := range []string{err.Error(), res.Err, run.Err} {
				if !strings.Contains(msg, `source "wiki"`) || !strings.Contains(msg, "401") {
					t.Errorf("error %q does not name the source and the refusal", msg)
				}
				if strings.Contains(msg, "wrong-token-abc123") || strings.Contains(msg, "Basic ") {
					t.Errorf("error %q carries the credentials", msg)
				}
			}
			if run.Status != docent.RunFailed {
				t.Errorf("run recorded as %q", run.Status)
			}
		})
	}
}

// TestRateLimitsAndRetries: a 429 with Retry-After: 2 is waited out on the
// injected clock; five 500s in a row, then success, complete the run; a
// page that always fails is reported and the rest of the run completes.
func TestRateLimitsAndRetries(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, nil)
			ids := e.putPages(6)

			e.srv.Script(http.StatusTooManyRequests, http.Header{"Retry-After": {"2"}}, 1)
			res := e.Sync()
			if res.Added != 6 || res.RateLimited != 1 || res.Retries != 1 || res.Waited != 2*time.Second {
				t.Errorf("run after a 429 = %+v, want 6 added, 1 rate-limit wait of 2s", res)
			}
			if got := e.clk.Sleeps(); !slices.Equal(got, []time.Duration{2 * time.Second}) {
				t.Errorf("slept %v, want [2s]", got)
			}

			e.srv.Tick(time.Hour)
			e.srv.Edit(ids[1], func(p *confluencetest.Page) { p.Body = "<p>Second version.</p>" })
			e.srv.Script(http.StatusInternalServerError, nil, 5)
			res = e.Sync()
			if res.Updated != 1 || res.Retries != 5 || res.RateLimited != 0 || res.Failed != 0 {
				t.Errorf("run after five 500s = %+v, want 1 updated after 5 retries", res)
			}

			e.srv.Tick(time.Hour)
			e.srv.Edit(ids[2], func(p *confluencetest.Page) { p.Body = "<p>Third version.</p>" })
			e.srv.Edit(ids[3], func(p *confluencetest.Page) { p.Body = "<p>Fine edit.</p>" })
			e.srv.FailPage(ids[2], http.StatusInternalServerError, -1)
			res = e.Sync()
			if res.Updated != 1 || res.Failed != 1 || len(res.Errors) != 1 || res.Errors[0].ID != docID(ids[2]) ||
				!res.Errors[0].Retry || !strings.Contains(res.Errors[0].Err, "500") {
				t.Errorf("run with a failing page = %+v, want page %s reported (retry) and %s updated", res, ids[2], ids[3])
			}
			if p, _ := e.srv.Get(ids[3]); !e.Docs()[docID(ids[3])].UpdatedAt.Equal(p.Modified) {
				t.Errorf("the good page's edit was not recorded: %+v", e.Docs()[docID(ids[3])])
			}
			// The failing page keeps the cursor: healed, the next run takes it.
			e.srv.FailPage(ids[2], 0, 0)
			res = e.Sync()
			if res.Updated != 1 || res.Failed != 0 {
				t.Errorf("run after the page healed = %+v, want it updated", res)
			}
			e.Converged()
		})
	}
}

// TestExcludedLabelsAndRoots: pages with an excluded label, or outside the
// page-tree roots, are not indexed; labelling an indexed page out (no new
// version) removes it in the next run.
func TestExcludedLabelsAndRoots(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			srvPages := func(e *env) (root, child, grandchild, other, draft string) {
				root = e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Runbooks", Body: "<p>All runbooks.</p>"})
				child = e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Deploy", ParentID: root, Body: "<p>Deploying.</p>"})
				grandchild = e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Rollback", ParentID: child, Body: "<p>Rolling back.</p>"})
				other = e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Team lunch", Body: "<p>Fridays.</p>"})
				draft = e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Draft", ParentID: root, Body: "<p>WIP.</p>", Labels: []string{"Draft"}})
				return
			}
			var root string
			e := newEnv(t, flavor, func(o *confluence.Options) { o.ExcludeLabels = []string{"draft", "archived"} })
			root, child, grandchild, other, draft := srvPages(e)
			e.Src = newSource(t, "wiki", e.srv, func(o *confluence.Options) {
				o.Clock, o.ExcludeLabels, o.Roots = e.clk, []string{"draft", "archived"}, []string{root}
			})
			e.Sync()
			docs := e.Docs()
			for id, want := range map[string]bool{root: true, child: true, grandchild: true, other: false, draft: false} {
				if _, ok := docs[docID(id)]; ok != want {
					t.Errorf("page %s indexed = %v, want %v", id, ok, want)
				}
			}
			if got := docs[docID(grandchild)].Path; got != "Runbooks > Deploy > Rollback" {
				t.Errorf("path of the grandchild = %q, want its breadcrumb", got)
			}
			e.srv.SetLabels(child, "archived")
			res := e.Sync()
			if _, ok := e.Docs()[docID(child)]; ok || res.Deleted != 1 {
				t.Errorf("after labelling the page out: run %+v, still indexed %v", res, ok)
			}
		})
	}
}

// TestOverlapWindow: a change the listing shows late, dated just before
// the last run's newest change, is fetched by the next run thanks to the
// overlap window; a page the engine never received, however old, is
// fetched too.
func TestOverlapWindow(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, nil) // the default window, 10 minutes
			ids := e.putPages(5)
			e.Sync()
			newest := e.srv.Now()
			e.srv.Edit(ids[0], func(p *confluencetest.Page) { p.Body = "<p>Late edit.</p>" })
			e.srv.SetModified(ids[0], newest.Add(-5*time.Minute))
			e.srv.Edit(ids[1], func(p *confluencetest.Page) { p.Body = "<p>Edit an hour too late to see.</p>" })
			e.srv.SetModified(ids[1], newest.Add(-time.Hour))
			moved := e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Moved in", Body: "<p>Old page.</p>",
				Modified: newest.Add(-24 * time.Hour)})
			before := e.Docs()
			res := e.Sync()
			// Handed over: the late edit (within the window), the moved-in
			// page, and the newest page (in the window, unchanged).
			if res.Updated != 1 || res.Added != 1 || res.Unchanged != 1 || res.Failed != 0 {
				t.Errorf("run = %+v, want 1 updated, 1 added, 1 unchanged", res)
			}
			after := e.Docs()
			if !after[docID(ids[0])].UpdatedAt.Equal(newest.Add(-5 * time.Minute)) {
				t.Errorf("the late edit inside the window was not synced: %+v", after[docID(ids[0])])
			}
			if _, ok := after[docID(moved)]; !ok {
				t.Errorf("the moved-in page with an old date was not synced")
			}
			// An edit shown more than the window late is missed until the
			// page changes again: the window is the trade-off.
			if after[docID(ids[1])].ContentHash != before[docID(ids[1])].ContentHash {
				t.Errorf("an edit dated before the window was synced: the window is not what the test thinks")
			}
		})
	}
}

// TestDocumentsAndAnchors checks what a page becomes: breadcrumb path, web
// link, space, labels, author, date; and chunk links that open the heading
// the way Confluence names it.
func TestDocumentsAndAnchors(t *testing.T) {
	for _, c := range []struct {
		flavor     confluencetest.Flavor
		url        string // page URL after the base
		anchor     string
		wantAuthor string
	}{
		{confluencetest.Cloud, "/spaces/ENG/pages/%s/Getting+started", "#Install-the-CLI", ""},
		{confluencetest.DataCenter, "/display/ENG/Getting+started", "#Gettingstarted-InstalltheCLI", "Dana Reyes"},
	} {
		t.Run(string(c.flavor), func(t *testing.T) {
			e := newEnv(t, c.flavor, nil)
			parent := e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Handbook", Body: "<p>Start here.</p>"})
			id := e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: "Getting started", ParentID: parent,
				Labels: []string{"onboarding", "cli"},
				Body:   "<p>Welcome.</p><h2>Install the CLI</h2><p>Run the installer.</p>"})
			col, err := connectorstest.Collect(context.Background(), e.Src, "")
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(col.Docs, func(d docent.Document) bool { return d.ID == docID(id) })
			if i < 0 {
				t.Fatalf("page not listed: %+v", col.Docs)
			}
			d := col.Docs[i]
			p, _ := e.srv.Get(id)
			wantURL := e.srv.URL + strings.ReplaceAll(c.url, "%s", id)
			if d.URL != wantURL || d.Path != "Handbook > Getting started" || d.Space != "ENG" ||
				!slices.Equal(d.Labels, []string{"cli", "onboarding"}) || d.Author != c.wantAuthor ||
				!d.UpdatedAt.Equal(p.Modified) || d.Title != "Getting started" {
				t.Errorf("document = %+v\nwant URL %s", d, wantURL)
			}
			e.Sync()
			var section []docent.Chunk
			if err := e.Idx.Scan(context.Background(), func(ch docent.Chunk) error {
				if ch.DocID == d.ID && len(ch.Section) > 0 {
					section = append(section, ch)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(section) != 1 || section[0].URL != wantURL+c.anchor {
				t.Errorf("section chunks %+v, want one linking to %s", section, wantURL+c.anchor)
			}
		})
	}
}

// TestMissingSpaceFailsTheRun: a space that does not exist (or the
// account cannot see) fails the run rather than deleting its pages.
func TestMissingSpaceFailsTheRun(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			e := newEnv(t, flavor, nil)
			e.putPages(2)
			e.Sync()
			e.Src = newSource(t, "wiki", e.srv, func(o *confluence.Options) { o.Clock, o.Spaces = e.clk, []string{"ENG", "NOPE"} })
			_, err := e.Eng.Sync(context.Background(), e.Src, nil)
			if err == nil || !strings.Contains(err.Error(), "space NOPE does not exist") {
				t.Errorf("sync error %v, want the missing space named", err)
			}
			if len(e.Docs()) != 2 {
				t.Errorf("a failed run deleted documents: %d left", len(e.Docs()))
			}
		})
	}
}
