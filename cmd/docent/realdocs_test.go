package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
)

// realdocsDir finds ../shared/eval/realdocs-dev beside the repository (a
// clone or a worktree one level deeper), "" when it is not there.
func realdocsDir() string {
	for _, up := range []string{"../..", "../../.."} {
		dir := filepath.Join(up, "..", "shared", "eval", "realdocs-dev")
		if _, err := os.Stat(filepath.Join(dir, "docent.yaml")); err == nil {
			return dir
		}
	}
	return ""
}

// TestRealdocsChunkHygiene syncs a real project's documentation (Traefik's
// MkDocs pages, shared/eval/realdocs-dev) through the product's own config
// and sync, and audits every chunk as indexed: no heading anchor in a
// section path, no raw shortcode, tag or component, no comment, no
// unbalanced fence; under 1% bodies indexed more than once (repeated
// within a document, or copies of another document's chunk that the index
// did not fold into one) and under 3% bodies under 120 characters. A
// ranking never shows two copies of one text: the Retriever keeps one and
// lists the other documents on it.
func TestRealdocsChunkHygiene(t *testing.T) {
	dir := realdocsDir()
	if dir == "" {
		t.Skip("../shared/eval/realdocs-dev not present")
	}
	ctx := context.Background()
	m := &Main{ConfigPath: filepath.Join(dir, "docent.yaml"), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	defer m.Close()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	results, err := m.SyncSources(ctx, m.Sources, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := results[0].Content; c.Fragments == 0 || results[0].Failed != 0 {
		t.Errorf("run: %d failed, content %+v; want every page indexed and the included fragments left to their pages", results[0].Failed, c)
	}
	audit, chunks, err := searchtest.AuditIndex(ctx, m.Index)
	if err != nil {
		t.Fatal(err)
	}
	audit.Check(t, chunks, 0.01, 0.03)
	if audit.Folded == 0 {
		t.Errorf("no copy of another page's text folded: the provider pages share option text")
	}

	g, err := eval.LoadGolden(filepath.Join(dir, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if g, err = g.Half("odd"); err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, q := range g.Questions {
		res, err := m.Retriever.Retrieve(ctx, search.Request{Text: q.Question, K: 30})
		if err != nil {
			t.Fatal(err)
		}
		bodies := map[string]string{}
		for _, h := range res.Hits {
			if prev, ok := bodies[h.Chunk.Body()]; ok && h.Chunk.Body() != "" {
				t.Errorf("%s: %s and %s hold the same text in one ranking", q.ID, prev, h.Chunk.ID)
			}
			bodies[h.Chunk.Body()] = h.Chunk.ID
			listed += len(h.Duplicates)
		}
	}
	t.Logf("copies listed on kept hits over %d questions: %d", len(g.Questions), listed)
}
