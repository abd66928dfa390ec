package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/search/typesense/typesensetest"
)

// tenSections is a wiki page of ten sections, each long enough to stand
// as its own chunk; edit replaces one sentence of section 7.
func tenSections(edit bool) string {
	var b strings.Builder
	b.WriteString("# Operations runbook\n\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "## Step %d\n\n", i)
		fmt.Fprintf(&b, "Step %d of the runbook checks subsystem %d and records the result in the log book. ", i, i)
		s := fmt.Sprintf("The on-call engineer escalates subsystem %d after %d minutes without a reply.", i, 10+i)
		if edit && i == 7 {
			s = "The on-call engineer escalates subsystem 7 after 45 minutes without a reply."
		}
		b.WriteString(s)
		b.WriteString(" Nobody skips this step, even at night or on a holiday.\n\n")
	}
	return b.String()
}

// TestSyncEmbedsOnlyChangedChunks is issue 20's acceptance for
// incremental embedding: through the real wiring, with the
// OpenAI-compatible embedder against a local server that counts the texts
// it embeds, on the local index and on the Typesense backend (the real
// client against the in-repo Typesense server). The first sync embeds
// every chunk; an unchanged re-sync embeds none; one sentence edited in
// one section of a ten-section page embeds that section's chunk only,
// the page's other chunks keeping their stored vectors; a changed
// embedder (another dimension) re-embeds every chunk.
func TestSyncEmbedsOnlyChangedChunks(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"local", "typesense"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			servers := modelServers(t)
			env := map[string]string{}
			for k, v := range testKeys {
				env[k] = v
			}
			extra := ""
			if backend == "typesense" {
				c, err := typesensetest.New(1, typesensetest.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(c.Close)
				env["TYPESENSE_API_KEY"] = c.APIKey()
				extra = "index:\n  backend: typesense\n  typesense:\n    nodes: [\"" + c.URLs()[0] + "\"]\n    api_key: ${TYPESENSE_API_KEY}\n"
			}
			dir := t.TempDir()
			wiki := filepath.Join(dir, "wiki")
			if err := os.MkdirAll(wiki, 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name, body string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(wiki, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("runbook.md", tenSections(false))
			write("faq.md", "# FAQ\n\n## Parking\n\nVisitors park on level two of the garage behind the office.\n")
			sources := "sources:\n  - name: handbook\n    type: bundled\n  - name: wiki\n    type: dir\n    dir:\n      path: " + wiki + "\n"
			path := llmConfigSources(t, dir, "offline", "openai", servers, sources, extra)

			dims := 32
			inputs := func() int {
				n := 0
				for _, c := range servers["openai"].CallsTo("embeddings") {
					n += len(c.Texts)
				}
				return n
			}
			syncAll := func() (embedded, reused, chunks int, name string) {
				t.Helper()
				m := &Main{ConfigPath: path, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(env), Retry: fastRetry}
				if err := m.Open(ctx); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				results, err := m.SyncSources(ctx, m.Sources, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range results {
					if r.Err != "" || r.Failed > 0 {
						t.Fatalf("sync %s: %s %v", r.Source, r.Err, r.Errors)
					}
					embedded += r.Content.Embedded
					reused += r.Content.Reused
				}
				assertVectorsOfText(t, m, dims)
				n, err := m.Index.Count(ctx)
				if err != nil {
					t.Fatal(err)
				}
				name, err = m.Index.EmbedderName(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return embedded, reused, n, name
			}
			setDims := func(d int) {
				t.Helper()
				dims = d
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				out := strings.ReplaceAll(string(b), "dimensions: 32", fmt.Sprintf("dimensions: %d", d))
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			var total int
			for _, step := range []struct {
				name        string
				change      func()
				wantInputs  func(chunks int) int // texts sent to the embedder by this step
				wantReused  int                  // chunks of changed documents that kept their vector
				wantEmbName string
			}{
				{"first sync", func() {}, func(chunks int) int { return chunks }, 0, "openai/nomic-embed-text/32"},
				{"unchanged re-sync", func() {}, func(int) int { return 0 }, 0, "openai/nomic-embed-text/32"},
				{"one sentence edited", func() { write("runbook.md", tenSections(true)) }, func(int) int { return 1 }, 9, "openai/nomic-embed-text/32"},
				{"embedder changed", func() { setDims(48) }, func(chunks int) int { return chunks }, 0, "openai/nomic-embed-text/48"},
			} {
				step.change()
				before := inputs()
				embedded, reused, chunks, name := syncAll()
				got := inputs() - before
				if step.name == "first sync" {
					total = chunks
				}
				want := step.wantInputs(chunks)
				if got != want {
					t.Errorf("%s: the embedder got %d texts, want %d (index of %d chunks)", step.name, got, want, chunks)
				}
				if step.name != "embedder changed" && embedded != got {
					t.Errorf("%s: the runs recorded %d chunks embedded, the embedder got %d", step.name, embedded, got)
				}
				if reused != step.wantReused {
					t.Errorf("%s: the runs recorded %d chunks reused, want %d", step.name, reused, step.wantReused)
				}
				if chunks != total || name != step.wantEmbName {
					t.Errorf("%s: index holds %d chunks by %q, want %d by %q", step.name, chunks, name, total, step.wantEmbName)
				}
			}

		})
	}
}

// assertVectorsOfText checks that every chunk the index holds carries the
// embedding of its own text (the local server's vectors are a hash of the
// words): a reused vector is never another text's.
func assertVectorsOfText(t *testing.T, m *Main, dim int) {
	t.Helper()
	ctx := context.Background()
	texts := map[string]string{}
	if err := m.Index.Scan(ctx, func(c docent.Chunk) error {
		texts[c.ID] = c.Text
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(texts))
	for id := range texts {
		ids = append(ids, id)
	}
	vecs, err := m.Index.Vectors(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for id, text := range texts {
		want := llmtest.HashVector(text, dim)
		got := vecs[id]
		if len(got) != dim {
			t.Errorf("chunk %s: vector of length %d, want %d", id, len(got), dim)
			continue
		}
		var dot, ng, nw float64
		for i := range got {
			dot += float64(got[i]) * float64(want[i])
			ng += float64(got[i]) * float64(got[i])
			nw += float64(want[i]) * float64(want[i])
		}
		if cos := dot / math.Sqrt(ng*nw); cos < 0.9999 {
			t.Errorf("chunk %s: stored vector is not its text's (cosine %.4f): %.60q", id, cos, text)
		}
	}
}
