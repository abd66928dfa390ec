package local_test

import (
	"context"
	"hash/fnv"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/examples/handbook"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/search/searchtest"
)

// handbookChunks chunks the bundled handbook's pages, each page also
// under a second source (so the ranking holds exact copies the index does
// not fold), with vectors drawn from the chunk IDs.
func handbookChunks(t *testing.T) []docent.Chunk {
	t.Helper()
	var out []docent.Chunk
	err := handbook.Pages(func(path, text string) error {
		title, _, _ := strings.Cut(text, "\n")
		for _, source := range []string{"handbook", "mirror"} {
			doc := docent.Document{ID: source + ":" + path, Source: source, Path: path, URL: "https://docs.example.com/" + path,
				Title: strings.TrimPrefix(title, "# "), Body: text}
			chunks, err := search.Chunker{}.Chunk(doc)
			if err != nil {
				return err
			}
			for i := range chunks {
				h := fnv.New32a()
				h.Write([]byte(chunks[i].Body()))
				n := int(h.Sum32())
				chunks[i].Vector = searchtest.Vec(n%7, 7+n%5, float64(n%11)/10)
			}
			out = append(out, chunks...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("%d handbook chunks, want the whole handbook", len(out))
	}
	return out
}

// TestFactsAsDerived: the facts the index keeps for every chunk are
// search.FactsOf of the chunk, after an upsert and after a reopen (which
// derives them again from the stored rows).
func TestFactsAsDerived(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facts.db")
	ix, err := local.Open(ctx, path, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	chunks := handbookChunks(t)
	// Chunks the chunker does not write but a connector or an older index
	// may hold: text without its heading line, a heading line alone, a
	// heading word the body repeats once more than the line does, fences
	// with a language, a camel-case heading.
	odd := func(id string, section []string, text string) docent.Chunk {
		return docent.Chunk{ID: id, DocID: "odd:" + id, Source: "odd", Title: "Proxy Options", Section: section, Text: text,
			Vector: searchtest.Vec(1, 2, 0.5)}
	}
	chunks = append(chunks,
		odd("bare", []string{"Retries"}, "Retries happen three times, then the proxy gives up."),
		odd("heading-only", []string{"Retries"}, "Proxy Options > Retries"),
		odd("repeats", []string{"Proxy", "proxyTimeout"}, "Proxy Options > Proxy > proxyTimeout\n\nThe proxy waits; options of the proxy timeout."),
		odd("fences", []string{"Install", "excludedContentTypes"}, "Proxy Options > Install > excludedContentTypes\n\nRun:\n\n```bash\nmake install\n```\n\n~~~yaml\nexcluded: [image/png]\n~~~\nDone."),
	)
	if err := ix.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	check := func(ix *local.Index, when string) {
		t.Helper()
		ids := make([]string, len(chunks))
		for i, c := range chunks {
			ids[i] = c.ID
		}
		got, err := ix.Facts(ctx, append(ids, "absent"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(chunks) {
			t.Fatalf("%s: facts of %d chunks, want %d", when, len(got), len(chunks))
		}
		leaf := 0
		for _, c := range chunks {
			want := search.FactsOf(c)
			if len(want.Own) > len(want.Body) {
				leaf++
			}
			if !reflect.DeepEqual(got[c.ID], want) {
				t.Errorf("%s: facts of %s = %+v, want %+v", when, c.ID, got[c.ID], want)
			}
		}
		if leaf == 0 {
			t.Errorf("%s: no chunk's heading adds a term to its body: the case is not tested", when)
		}
	}
	check(ix, "after upsert")

	// A copy of a chunk in the same source (folded: indexed once, under
	// the first) keeps facts of its own, and has them once the first is
	// deleted and it takes its place.
	first := chunks[0]
	copyOf := first
	copyOf.ID, copyOf.DocID, copyOf.Section = first.ID+"-copy", first.DocID+"-copy", []string{"A heading of its own"}
	copyOf.Text = docent.ChunkHeading(copyOf.Title, copyOf.Section) + "\n\n" + first.Body()
	if err := ix.Upsert(ctx, []docent.Chunk{copyOf}); err != nil {
		t.Fatal(err)
	}
	if cs, _ := ix.Copies(ctx, []string{first.ID}); len(cs[first.ID]) != 1 {
		t.Fatalf("copies of %s = %v, want the copy folded under it", first.ID, cs)
	}
	chunks = append(chunks, copyOf)
	check(ix, "with a folded copy")
	if err := ix.DeleteDocs(ctx, first.DocID); err != nil {
		t.Fatal(err)
	}
	chunks = slices.DeleteFunc(chunks, func(c docent.Chunk) bool { return c.DocID == first.DocID })
	check(ix, "after the first of the group is deleted")
	ix.Close()
	ix, err = local.Open(ctx, path, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	check(ix, "after reopen")
}

// withoutFacts is the local index without its facts, so the Retriever
// loads and analyzes the candidates' chunks.
type withoutFacts struct {
	search.Index
	search.TermStats
	search.Folder
}

// TestFactsRankAsText: the Retriever ranks the same with the index's
// facts as with the chunks loaded and analyzed, on the handbook's golden
// questions: the same hits, scores and listed copies.
func TestFactsRankAsText(t *testing.T) {
	ctx := context.Background()
	ix, err := local.Open(ctx, filepath.Join(t.TempDir(), "rank.db"), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Upsert(ctx, handbookChunks(t)); err != nil {
		t.Fatal(err)
	}
	with, err := search.NewRetriever(ix, nil, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	without, err := search.NewRetriever(withoutFacts{ix, ix, ix}, nil, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := eval.ParseGolden("golden.yaml", handbook.Golden)
	if err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, q := range set.Questions {
		req := search.Request{Text: q.Question, Vector: searchtest.Vec(len(q.Question)%7, 9, 0.3), K: 10}
		a, err := with.Retrieve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := without.Retrieve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Hits, b.Hits) {
			t.Errorf("%q: with facts %v, loaded %v", q.Question, hitIDs(a.Hits), hitIDs(b.Hits))
		}
		for _, h := range a.Hits {
			copies += len(h.Duplicates)
		}
	}
	if copies == 0 {
		t.Error("no hit listed a copy: the mirrored pages are not in the rankings compared")
	}
}

func hitIDs(hits []docent.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Chunk.ID
	}
	return out
}
