package console

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/console/gaps"
	"github.com/docent-hq/docent/templates"
)

// TestCoverageGaps: the period's misses grouped into topics, each with
// its questions, closest page and a suggested action; a miss older than
// the week is in the month only; both export as CSV.
func TestCoverageGaps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	miss := func(q string, status docent.Status, age time.Duration) docent.Turn {
		t.Helper()
		tu := docent.Turn{Question: docent.Question{Text: q, Platform: "slack", Channel: "C1"},
			Answer: docent.Answer{Status: status}, CreatedAt: time.Now().UTC().Add(-age)}
		if err := e.db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		return tu
	}
	miss("How do I reset my VPN token on a new laptop?", docent.StatusNotFound, time.Hour)
	miss("VPN token reset keeps failing", docent.StatusUncertain, 2*time.Hour)
	miss("Which VPN token do contractors use?", docent.StatusNotFound, 3*time.Hour)
	miss("What is the meal per diem in Canada?", docent.StatusNotFound, time.Hour)
	miss("meal per diem for Canada trips", docent.StatusUncertain, 4*time.Hour)
	old := miss("Is there a meal per diem in Mexico?", docent.StatusNotFound, 20*24*time.Hour)
	rated := e.ask(questionText("hi there!")) // small talk is never a miss, whatever its rating
	if err := e.db.CreateFeedback(ctx, &docent.Feedback{TurnID: rated.ID, Rating: docent.RatingNotHelpful}); err != nil {
		t.Fatal(err)
	}

	c := e.client()
	c.login()
	tests := []struct {
		name      string
		path      string
		wantSizes []string
		wantPages []string
	}{
		{"week", "/gaps", []string{"3", "2"}, []string{"handbook:it/vpn.md", "handbook:travel/expense-policy"}},
		{"month", "/gaps?period=month", []string{"3", "3"}, []string{"handbook:it/vpn.md", "handbook:travel/expense-policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.get(tt.path)
			if r.StatusCode != http.StatusOK {
				t.Fatalf("GET %s = %d", tt.path, r.StatusCode)
			}
			gaps := r.doc.Find(`[data-testid=gap]`)
			if got := attrs(gaps, "data-size"); !slices.Equal(got, tt.wantSizes) {
				t.Fatalf("gap sizes %v, want %v; terms %v", got, tt.wantSizes, texts(r.doc.Find(`[data-testid=gap-terms]`)))
			}
			var firstPages []string
			gaps.Each(func(_ int, g *goquery.Selection) {
				first := g.Find(`[data-testid=gap-page]`).First()
				doc, _ := first.Attr("data-doc")
				firstPages = append(firstPages, doc)
				if text(first.Find("a")) == "" {
					t.Errorf("the closest page %s has no title", doc)
				}
				if text(g.Find(`[data-testid=gap-action]`)) == "" || g.Find(`[data-testid=gap-questions] li`).Length() == 0 {
					t.Errorf("gap without an action or questions: %s", text(g))
				}
			})
			slices.Sort(firstPages)
			for i, want := range tt.wantPages {
				if i >= len(firstPages) || !strings.HasPrefix(firstPages[i], want) {
					t.Errorf("closest pages %v, want %v", firstPages, tt.wantPages)
					break
				}
			}
			if strings.Contains(r.body, "hi there!") {
				t.Error("small talk is in a gap")
			}
		})
	}

	r := c.get("/gaps.csv?period=month")
	if ct := r.Header.Get("Content-Type"); r.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("GET /gaps.csv = %d %s", r.StatusCode, ct)
	}
	rows, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][1] != "size" || rows[1][1] != "3" {
		t.Fatalf("gaps CSV = %v, %v", rows, err)
	}

	r = c.get("/misses.csv?review=all")
	rows, err = csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("GET /misses.csv = %d, %v", r.StatusCode, err)
	}
	if len(rows) != 7 || rows[0][0] != "turn_id" || rows[6][0] != itoa(old.ID) || !strings.HasSuffix(rows[6][15], "/turns/"+itoa(old.ID)) {
		t.Errorf("misses CSV = %v, want a header and the 6 misses, oldest last", rows)
	}
	if r := c.get("/gaps?period=year"); r.StatusCode != http.StatusOK || r.doc.Find(`[data-testid=gap-period] option[selected]`).AttrOr("value", "") != "week" {
		t.Errorf("an unknown period is not the week")
	}
}

// TestCSVFormulasDefused: a question that a spreadsheet would run as a
// formula is written as text.
func TestCSVFormulasDefused(t *testing.T) {
	e := newEnv(t)
	tu := docent.Turn{Question: docent.Question{Text: `=HYPERLINK("http://evil","x")`}, Answer: docent.Answer{Status: docent.StatusNotFound},
		CreatedAt: time.Now().UTC()}
	if err := e.db.CreateTurn(context.Background(), &tu); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.login()
	rows, err := csv.NewReader(strings.NewReader(c.get("/misses.csv").body)).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][2] != `'=HYPERLINK("http://evil","x")` {
		t.Fatalf("misses CSV = %v, %v", rows, err)
	}
}

// TestGoldenAuthoringKeepsWork: searching for the expected document keeps
// what was typed; a miss made a golden question is marked reviewed and
// says so in the inbox, with one link per row.
func TestGoldenAuthoringKeepsWork(t *testing.T) {
	e := newEnv(t)
	menu := e.ask(docent.Question{Text: "What is on the cafeteria menu on Fridays?", Platform: "api"})
	c := e.client()
	c.login()
	if n := c.get("/misses").doc.Find(`[data-testid=turn-row][data-turn="` + itoa(menu.ID) + `"] a[href^="/golden/new"]`).Length(); n != 1 {
		t.Errorf("%d links to the golden form on the miss's row, want 1", n)
	}
	typed := url.Values{"id": {"cafeteria-menu"}, "question": {"What is on the menu on Fridays?"}, "kind": {"unanswerable"},
		"facts": {"fish on Fridays"}, "docq": {"vpn"}, "from_turn": {itoa(menu.ID)}}
	r := c.post("/golden/find", typed)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("POST /golden/find = %d", r.StatusCode)
	}
	for sel, want := range map[string]string{`[data-testid=golden-id]`: "cafeteria-menu",
		`[data-testid=golden-question-text]`: "What is on the menu on Fridays?"} {
		if v, _ := r.doc.Find(sel).Attr("value"); v != want {
			t.Errorf("%s after the search = %q, want %q kept", sel, v, want)
		}
	}
	if v := text(r.doc.Find(`[data-testid=golden-facts]`)); v != "fish on Fridays" {
		t.Errorf("facts after the search = %q, want them kept", v)
	}
	if !strings.Contains(r.body, "it/vpn.md") {
		t.Error("the search found no VPN page")
	}
	typed.Del("docq")
	typed.Set("facts", "")
	if r := c.post("/golden", typed); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /golden = %d: %s", r.StatusCode, r.body)
	}
	row := c.get("/misses?review=all").doc.Find(`[data-testid=turn-row][data-turn="` + itoa(menu.ID) + `"]`)
	if !strings.Contains(text(row), "reviewed by alice") || row.Find(`[data-testid=in-golden] a[href="/golden/q/cafeteria-menu"]`).Length() != 1 {
		t.Errorf("the miss made a golden question: %q, want it reviewed and linked to its question", text(row))
	}
	if n := c.get("/misses").doc.Find(`[data-testid=turn-row][data-turn="` + itoa(menu.ID) + `"]`).Length(); n != 0 {
		t.Error("the miss made a golden question is still open")
	}
}

// TestGapActionsAreNamed: the page names every action the gaps package
// suggests. templates knows them by their machine names, so an action
// renamed there would show its bare machine name.
func TestGapActionsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		action gaps.Action
		want   string
	}{
		{gaps.ActionWrite, "write a page"},
		{gaps.ActionSynonym, "add a synonym"},
		{gaps.ActionRefresh, "fix or refresh a stale page"},
		{gaps.ActionFix, "fix the page"},
		{gaps.ActionGolden, "add a golden question"},
	} {
		t.Run(string(tc.action), func(t *testing.T) {
			if got := templates.GapActionText(string(tc.action)); got != tc.want {
				t.Errorf("GapActionText(%q) = %q, want %q", tc.action, got, tc.want)
			}
		})
	}
}
