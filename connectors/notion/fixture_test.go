package notion_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/notion"
)

// TestAPIFixtures syncs a workspace served verbatim from response files in
// testdata/api (search results, block children and a user, in the shapes
// of Notion's documented examples with the fields docent does not read
// left in), not from notiontest: the connector must read the documented
// shapes, not only the fake's. Search pagination is followed, a toggle's
// children are fetched, and a second run changes nothing.
func TestAPIFixtures(t *testing.T) {
	file := func(name string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join("testdata", "api", name))
		return b, err == nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret_fixture" || r.Header.Get("Notion-Version") != notion.Version {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var name string
		switch p := r.URL.Path; {
		case p == "/v1/search" && r.Method == http.MethodPost:
			var q struct {
				Filter      struct{ Value string } `json:"filter"`
				StartCursor string                 `json:"start_cursor"`
			}
			if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
				t.Errorf("search body: %v", err)
			}
			switch {
			case q.Filter.Value == "database":
				name = "search-database.json"
			case q.StartCursor == "":
				name = "search-page-1.json"
			case q.StartCursor == "e6dc1357-9778-4a2e-afe9-4861cc3b6c02":
				name = "search-page-2.json"
			}
		case strings.HasPrefix(p, "/v1/blocks/") && strings.HasSuffix(p, "/children"):
			name = "blocks-" + strings.TrimSuffix(strings.TrimPrefix(p, "/v1/blocks/"), "/children") + ".json"
		case strings.HasPrefix(p, "/v1/users/"):
			name = "user-" + strings.TrimPrefix(p, "/v1/users/") + ".json"
		}
		b, ok := file(name)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"object":"error","status":404,"code":"object_not_found","message":"Could not find object."}`))
			return
		}
		w.Write(b)
	}))
	defer srv.Close()

	src, err := notion.New("notes", notion.Options{APIURL: srv.URL, Token: "secret_fixture", RequestsPerSecond: 1000,
		Clock: connectorstest.NewClock(time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	s := connectorstest.NewSynced(t, src)
	if res := s.Sync(); res.Added != 2 || res.Failed != 0 {
		t.Fatalf("first run = %+v, want the 2 pages of the fixtures added", res)
	}
	texts, first := map[string]string{}, map[string]docent.Chunk{}
	if err := s.Idx.Scan(context.Background(), func(c docent.Chunk) error {
		if _, ok := first[c.DocID]; !ok {
			first[c.DocID] = c
		}
		texts[c.DocID] += c.Text + "\n"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	guide, oncall := "notes:59833787-2cf9-4fdf-8782-e53db20768a5", "notes:7c9a2f10-3b4d-4e8f-9a1b-2c3d4e5f6a7b"
	if c := first[guide]; c.Title != "Deploy guide" || !strings.HasPrefix(c.URL, "https://www.notion.so/Deploy-guide-598337872cf94fdf8782e53db20768a5") ||
		len(c.Section) == 0 || c.Section[len(c.Section)-1] != "Rolling back" {
		t.Errorf("guide chunk: title %q, URL %q, section %q", c.Title, c.URL, c.Section)
	}
	// Notion's "shell" is written as bash, the name markdown renderers know.
	for _, want := range []string{"Use the `deploy` tool; see [the runbook](https://wiki.acme.example/runbook)", "```bash\ndeploy rollback --to previous\n```"} {
		if !strings.Contains(texts[guide], want) {
			t.Errorf("guide text lacks %q:\n%s", want, texts[guide])
		}
	}
	for _, want := range []string{"**Page the on-call engineer.**", "Escalation", "Call the incident manager after 15 minutes."} {
		if !strings.Contains(texts[oncall], want) {
			t.Errorf("on-call text lacks %q:\n%s", want, texts[oncall])
		}
	}
	if res := s.Sync(); res.Added+res.Updated+res.Deleted+res.Failed != 0 {
		t.Errorf("second run = %+v, want nothing changed", res)
	}
	s.Converged()
}
