package confluence_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

// TestDataCenterFixtures syncs a space served verbatim from response files
// in testdata/api/datacenter (REST v1 Content and ContentArray in the
// shapes of Atlassian's documented examples, with the fields docent does
// not read left in: _expandable, extensions, version.by, label prefixes,
// _links.base and context), not from confluencetest: the connector must
// read the documented shapes, not only the fake's. Each page arrives with
// its title, breadcrumb from its ancestors, labels, web UI link with
// heading anchors and converted body, and a second run changes nothing.
func TestDataCenterFixtures(t *testing.T) {
	dir := filepath.Join("testdata", "api", "datacenter")
	file := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer pat-123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		body := "ids"
		if strings.Contains(q.Get("expand"), "body.storage") {
			body = "body"
		}
		switch p := strings.TrimPrefix(r.URL.Path, "/confluence"); {
		case p == "/rest/api/space/ENG":
			w.Write(file("space-ENG.json"))
		case p == "/rest/api/content" && q.Get("spaceKey") == "ENG" && q.Get("type") == "page":
			start := q.Get("start")
			if start == "" {
				start = "0"
			}
			w.Write(file("content-" + body + "-start" + start + ".json"))
		case strings.HasPrefix(p, "/rest/api/content/"):
			id := strings.TrimPrefix(p, "/rest/api/content/")
			for _, f := range []string{"content-body-start0.json", "content-body-start2.json"} {
				var arr struct{ Results []map[string]any }
				if err := json.Unmarshal(file(f), &arr); err != nil {
					t.Error(err)
				}
				for _, c := range arr.Results {
					if c["id"] == id {
						json.NewEncoder(w).Encode(c)
						return
					}
				}
			}
			w.WriteHeader(http.StatusNotFound)
		default:
			t.Errorf("unexpected request %s", r.URL.RequestURI())
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()

	src, err := confluence.New("wiki", confluence.Options{BaseURL: srv.URL + "/confluence", Flavor: confluence.Flavor("datacenter"),
		Token: "pat-123", Spaces: []string{"ENG"}, Clock: connectorstest.NewClock(time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	s, chunks, c, text := syncFixtures(t, src)
	if c.Title != "Deploy Runbook" || c.Space != "ENG" || !slices.Contains(c.Labels, "runbook") ||
		!strings.HasPrefix(c.URL, srv.URL+"/confluence/display/ENG/Deploy+Runbook") ||
		!strings.HasSuffix(c.URL, "#DeployRunbook-Rollback") || len(c.Section) == 0 || c.Section[0] != "Rollback" {
		t.Errorf("runbook chunk = title %q, space %q, labels %v, URL %q, section %q", c.Title, c.Space, c.Labels, c.URL, c.Section)
	}
	if !strings.Contains(text, "```bash\ndeploy rollback --to previous\n```") || !strings.Contains(text, "Roll back a failed deploy with the *deploy* tool.") {
		t.Errorf("runbook text:\n%s", text)
	}
	if p := s.Docs()["wiki:393220"].Path; !strings.Contains(p, "Engineering Home") || !strings.Contains(p, "Deploy Runbook") {
		t.Errorf("runbook path %q, want the breadcrumb from its ancestors", p)
	}
	if oc := chunks["wiki:393221"]; len(oc) == 0 || oc[0].URL != srv.URL+"/confluence/pages/viewpage.action?pageId=393221" {
		t.Errorf("on-call chunks %+v, want its viewpage link", oc)
	}
	if res := s.Sync(); res.Added+res.Updated+res.Deleted+res.Failed != 0 {
		t.Errorf("second run = %+v, want nothing changed", res)
	}
	s.Converged()
}

// TestCloudFixtures is TestDataCenterFixtures for Confluence Cloud's REST
// API v2 (testdata/api/cloud: Space, PageBulk and Label lists with
// cursor next links as the API writes them, under /wiki; pages and
// their labels one by one).
func TestCloudFixtures(t *testing.T) {
	dir := filepath.Join("testdata", "api", "cloud")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "bot@acme.example" || p != "api-token-123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		page := "1"
		if q.Get("cursor") != "" {
			page = "2"
		}
		kind := "ids"
		if q.Get("body-format") == "storage" {
			kind = "body"
		}
		var name string
		switch p := strings.TrimPrefix(r.URL.Path, "/wiki/api/v2"); {
		case p == "/spaces" && q.Get("keys") == "ENG":
			name = "spaces.json"
		case p == "/spaces/98305/pages":
			name = "pages-" + kind + "-" + page + ".json"
		case p == "/spaces/98305/content/labels":
			name = "space-labels.json"
		case strings.HasPrefix(p, "/labels/") && strings.HasSuffix(p, "/pages") && q.Get("space-id") == "98305":
			name = "label-" + strings.TrimSuffix(strings.TrimPrefix(p, "/labels/"), "/pages") + "-pages.json"
		case strings.HasPrefix(p, "/pages/") && strings.HasSuffix(p, "/labels"):
			name = "page-" + strings.TrimSuffix(strings.TrimPrefix(p, "/pages/"), "/labels") + "-labels.json"
		case strings.HasPrefix(p, "/pages/"):
			name = "page-" + strings.TrimPrefix(p, "/pages/") + ".json"
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if name == "" || err != nil {
			t.Errorf("unexpected request %s", r.URL.RequestURI())
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	defer srv.Close()

	src, err := confluence.New("wiki", confluence.Options{BaseURL: srv.URL + "/wiki", Flavor: confluence.Flavor("cloud"),
		Email: "bot@acme.example", Token: "api-token-123", Spaces: []string{"ENG"},
		Clock: connectorstest.NewClock(time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	s, chunks, c, text := syncFixtures(t, src)
	if c.Title != "Deploy Runbook" || c.Space != "ENG" || !slices.Contains(c.Labels, "runbook") ||
		!strings.HasPrefix(c.URL, srv.URL+"/wiki/spaces/ENG/pages/393220/Deploy+Runbook#") ||
		len(c.Section) == 0 || c.Section[0] != "Rollback" {
		t.Errorf("runbook chunk = title %q, space %q, labels %v, URL %q, section %q", c.Title, c.Space, c.Labels, c.URL, c.Section)
	}
	if !strings.Contains(text, "```bash\ndeploy rollback --to previous\n```") || !strings.Contains(text, "Roll back a failed deploy with the *deploy* tool.") {
		t.Errorf("runbook text:\n%s", text)
	}
	if p := s.Docs()["wiki:393220"].Path; !strings.Contains(p, "Engineering Home") || !strings.Contains(p, "Deploy Runbook") {
		t.Errorf("runbook path %q, want the breadcrumb from its parent", p)
	}
	if oc := chunks["wiki:393221"]; len(oc) == 0 || slices.Contains(oc[0].Labels, "runbook") {
		t.Errorf("on-call chunks %+v, want indexed without the runbook label", oc)
	}
	if res := s.Sync(); res.Added+res.Updated+res.Deleted+res.Failed != 0 {
		t.Errorf("second run = %+v, want nothing changed", res)
	}
	s.Converged()
}

// syncFixtures syncs src's three fixture pages and returns the synced
// index, every document's chunks, and the runbook's (wiki:393220) first
// chunk and whole text.
func syncFixtures(t *testing.T, src *confluence.Source) (*connectorstest.Synced, map[string][]docent.Chunk, docent.Chunk, string) {
	t.Helper()
	s := connectorstest.NewSynced(t, src)
	if res := s.Sync(); res.Added != 3 || res.Failed != 0 {
		t.Fatalf("first run = %+v, want the 3 pages of the fixtures added", res)
	}
	chunks := map[string][]docent.Chunk{}
	if err := s.Idx.Scan(context.Background(), func(c docent.Chunk) error {
		chunks[c.DocID] = append(chunks[c.DocID], c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rb := chunks["wiki:393220"]
	if len(rb) == 0 {
		t.Fatalf("the runbook was not indexed; indexed: %v", s.Indexed())
	}
	var text strings.Builder
	for _, c := range rb {
		text.WriteString(c.Text + "\n")
	}
	return s, chunks, rb[0], text.String()
}
