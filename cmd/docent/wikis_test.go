package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docent-hq/docent/connectors/confluence/confluencetest"
	"github.com/docent-hq/docent/connectors/notion/notiontest"
)

// TestSyncWikisEndToEnd configures a Confluence Cloud, a Confluence Data
// Center and a Notion source against local fakes, the way an admin would
// (tokens from the environment), and runs docent sync twice: the first run
// adds every page, the second fetches nothing new; the summary reports the
// requests and no output carries a token.
func TestSyncWikisEndToEnd(t *testing.T) {
	t.Parallel()
	cloud := confluencetest.New(t, confluencetest.Cloud, "ENG")
	dc := confluencetest.New(t, confluencetest.DataCenter, "OPS")
	for i := range 3 {
		cloud.Put(confluencetest.Page{SpaceKey: "ENG", Title: fmt.Sprintf("Cloud page %d", i),
			Body: fmt.Sprintf("<p>The deploy freeze number %d starts on Friday.</p>", i)})
	}
	dc.Put(confluencetest.Page{SpaceKey: "OPS", Title: "Pager rota", Body: "<p>The pager rotates on Mondays.</p>"})
	nt := notiontest.New(t)
	nt.AddPage(notiontest.Page{Title: "Expense policy", Blocks: []*notiontest.Block{notiontest.Paragraph("Meals are covered up to 40 EUR.")}})
	nt.AddPage(notiontest.Page{Title: "Laptop care", Blocks: []*notiontest.Block{notiontest.Paragraph("Return laptops to IT.")}})

	dir := t.TempDir()
	cfg := filepath.Join(dir, "docent.yaml")
	yaml := fmt.Sprintf(`data_dir: %s
sync:
  schedule: "off"
sources:
  - name: eng-wiki
    type: confluence
    confluence:
      base_url: %s
      email: %s
      token: ${CONFLUENCE_TOKEN}
      spaces: [ENG]
  - name: ops-wiki
    type: confluence
    confluence:
      base_url: %s
      flavor: datacenter
      token: ${CONFLUENCE_PAT}
      spaces: [OPS]
  - name: notes
    type: notion
    notion:
      api_url: %s
      token: ${NOTION_TOKEN}
      requests_per_second: 50
`, filepath.Join(dir, "data"), cloud.URL, confluencetest.Email, dc.URL, nt.URL)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"DOCENT_CONFIG": cfg, "CONFLUENCE_TOKEN": confluencetest.Token,
		"CONFLUENCE_PAT": confluencetest.Token, "NOTION_TOKEN": notiontest.Token})
	sync := func() string {
		t.Helper()
		var out, logs bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &logs, Getenv: env}
		defer m.Close()
		if err := m.Sync(context.Background(), nil); err != nil {
			t.Fatalf("sync: %v\n%s", err, logs.String())
		}
		for _, secret := range []string{confluencetest.Token, notiontest.Token} {
			if strings.Contains(out.String()+logs.String(), secret) {
				t.Errorf("a token reached the output or the logs")
			}
		}
		return out.String()
	}
	row := func(out, source string) []string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^\s*` + source + `\s+(.*)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no row for %s in:\n%s", source, out)
		}
		return strings.Fields(m[1])
	}
	first := sync()
	// Columns: seen added updated unchanged deleted failed requests retries docs/s time status.
	for source, added := range map[string]string{"eng-wiki": "3", "ops-wiki": "1", "notes": "2"} {
		r := row(first, source)
		if r[1] != added || r[5] != "0" || r[6] == "0" || r[len(r)-1] != "ok" {
			t.Errorf("first sync, %s: %v (want %s added, requests counted, ok)\n%s", source, r, added, first)
		}
	}
	second := sync()
	for _, source := range []string{"eng-wiki", "ops-wiki", "notes"} {
		if r := row(second, source); r[1] != "0" || r[2] != "0" || r[len(r)-1] != "ok" {
			t.Errorf("second sync, %s: %v (want nothing added or updated)\n%s", source, r, second)
		}
	}
}
