package eval

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestLoadBEIR(t *testing.T) {
	b, err := LoadBEIR("testdata/beir-tiny", "test")
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "beir-tiny" || b.Split != "test" {
		t.Errorf("Name, Split = %q, %q", b.Name, b.Split)
	}
	if len(b.Corpus) != 5 {
		t.Fatalf("corpus has %d docs, want 5", len(b.Corpus))
	}
	wantDoc := docent.Document{
		ID: "beir:d1", Source: "beir", Path: "d1", URL: "",
		Title: "Vitamin D and bone density",
		Body:  "Vitamin D supplements raise bone mineral density in older adults.",
	}
	if !reflect.DeepEqual(b.Corpus[0], wantDoc) {
		t.Errorf("Corpus[0] = %+v, want %+v", b.Corpus[0], wantDoc)
	}
	if d := b.Corpus[3]; d.Title != "" || d.ID != "beir:d4" {
		t.Errorf("doc without title = %+v", d)
	}
	if d := b.Corpus[4]; d.ID != "beir:10" || d.Path != "10" {
		t.Errorf("numeric _id: got ID %q Path %q, want beir:10 and 10", d.ID, d.Path)
	}
	// Query 7 has no judgments in test; numeric ids sort numerically.
	wantQueries := []Query{
		{ID: "1", Text: "Vitamin D strengthens bones."},
		{ID: "2", Text: "Does deep sleep help memory?"},
		{ID: "10", Text: "Coffee improves sleep quality."},
	}
	if !reflect.DeepEqual(b.Queries, wantQueries) {
		t.Errorf("Queries = %+v, want %+v", b.Queries, wantQueries)
	}
	wantQrels := map[string]map[string]int{
		"1":  {"d1": 2, "d2": 1},
		"2":  {"d3": 1},
		"10": {"d4": 1, "d2": 0},
	}
	if !reflect.DeepEqual(b.Qrels, wantQrels) {
		t.Errorf("Qrels = %v, want %v", b.Qrels, wantQrels)
	}

	// The train split has CRLF line endings and selects query 7 only.
	train, err := LoadBEIR("testdata/beir-tiny", "train")
	if err != nil {
		t.Fatal(err)
	}
	if len(train.Queries) != 1 || train.Queries[0].ID != "7" || train.Qrels["7"]["d2"] != 1 {
		t.Errorf("train: queries %+v qrels %v", train.Queries, train.Qrels)
	}
}

// writeBEIR copies the tiny set into a temp dir, replacing the named files.
func writeBEIR(t *testing.T, replace map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"corpus.jsonl", "queries.jsonl", "qrels/test.tsv"} {
		data, err := os.ReadFile(filepath.Join("testdata/beir-tiny", name))
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := replace[name]; ok {
			data = []byte(r)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadBEIRErrors(t *testing.T) {
	const doc1 = `{"_id": "d1", "title": "t", "text": "x"}` + "\n"
	tests := []struct {
		name    string
		replace map[string]string
		split   string
		want    []string // substrings of the error
	}{
		{
			name:    "malformed corpus line",
			replace: map[string]string{"corpus.jsonl": doc1 + "\n" + `{"_id": "d2", "text": "unterminated` + "\n"},
			want:    []string{"corpus.jsonl:3:", "unexpected end of JSON input"},
		},
		{
			name:    "corpus line missing _id",
			replace: map[string]string{"corpus.jsonl": doc1 + `{"title": "t", "text": "y"}` + "\n"},
			want:    []string{"corpus.jsonl:2: missing _id"},
		},
		{
			name:    "corpus line missing text",
			replace: map[string]string{"corpus.jsonl": `{"_id": "d9", "title": "t"}` + "\n"},
			want:    []string{"corpus.jsonl:1: missing text"},
		},
		{
			name:    "corpus _id of the wrong type",
			replace: map[string]string{"corpus.jsonl": `{"_id": ["d9"], "text": "t"}` + "\n"},
			want:    []string{"corpus.jsonl:1: _id must be a string or number"},
		},
		{
			name:    "duplicate corpus id",
			replace: map[string]string{"corpus.jsonl": doc1 + doc1},
			want:    []string{"corpus.jsonl:2: duplicate _id \"d1\" (first on line 1)"},
		},
		{
			name:    "empty corpus",
			replace: map[string]string{"corpus.jsonl": "\n"},
			want:    []string{"corpus.jsonl: no documents"},
		},
		{
			name:    "malformed query line",
			replace: map[string]string{"queries.jsonl": `{"_id": "1", "text": "ok"}` + "\nnot json\n"},
			want:    []string{"queries.jsonl:2:", "invalid character"},
		},
		{
			name:    "judged query missing from queries",
			replace: map[string]string{"queries.jsonl": `{"_id": "1", "text": "ok"}` + "\n"},
			want:    []string{"queries.jsonl: judged queries missing: 2, 10"},
		},
		{
			name:    "qrels with two columns",
			replace: map[string]string{"qrels/test.tsv": "query-id\tcorpus-id\tscore\n1\td1\t1\n2\td3\n"},
			want:    []string{"test.tsv:3: want 3 columns"},
		},
		{
			name:    "qrels score not an integer",
			replace: map[string]string{"qrels/test.tsv": "1\td1\thigh\n"},
			want:    []string{"test.tsv:1: score \"high\" is not an integer"},
		},
		{
			name:    "duplicate judgment",
			replace: map[string]string{"qrels/test.tsv": "1\td1\t1\n1\td1\t2\n"},
			want:    []string{"test.tsv:2: duplicate judgment for query \"1\", doc \"d1\""},
		},
		{
			name:    "empty qrels",
			replace: map[string]string{"qrels/test.tsv": "query-id\tcorpus-id\tscore\n"},
			want:    []string{"test.tsv: no judgments"},
		},
		{name: "missing split", split: "dev", want: []string{"dev.tsv", "no such file"}},
		{name: "empty split name", split: "-", want: []string{"empty split"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeBEIR(t, tt.replace)
			split := tt.split
			switch split {
			case "":
				split = "test"
			case "-":
				split = ""
			}
			_, err := LoadBEIR(dir, split)
			if err == nil {
				t.Fatal("LoadBEIR succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "eval: beir: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// fakeSearcher answers from canned hit lists per query text and records
// the depth of every call.
type fakeSearcher struct {
	hits   map[string][]docent.Hit
	err    error
	depths []int
}

func (f *fakeSearcher) Search(_ context.Context, query string, k int) ([]docent.Hit, error) {
	f.depths = append(f.depths, k)
	if f.err != nil {
		return nil, f.err
	}
	hits := f.hits[query]
	return hits[:min(k, len(hits))], nil
}

func hit(docID string, ord int, score float64) docent.Hit {
	return docent.Hit{Chunk: docent.Chunk{ID: docID + "#" + string(rune('0'+ord)), DocID: docID, Ord: ord}, Score: score}
}

func TestRunBEIR(t *testing.T) {
	b, err := LoadBEIR("testdata/beir-tiny", "test")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSearcher{hits: map[string][]docent.Hit{
		// Query 1: d2 has two chunks (ranks 1 and 3); d1 ranks second. Documents: d2, d1, d3.
		"Vitamin D strengthens bones.": {
			hit("beir:d2", 0, 0.9), hit("beir:d1", 0, 0.8), hit("beir:d2", 1, 0.7), hit("beir:d3", 0, 0.5),
		},
		// Query 2: nothing relevant.
		"Does deep sleep help memory?": {hit("beir:d4", 0, 0.4)},
		// Query 10: the query's own document "10" comes first and is dropped.
		"Coffee improves sleep quality.": {
			hit("beir:10", 0, 0.99), hit("beir:d4", 2, 0.6), hit("beir:d4", 0, 0.5), hit("beir:d2", 0, 0.3),
		},
	}}
	var run bytes.Buffer
	rep, err := RunBEIR(context.Background(), b, s, BEIROptions{K: 2, RunFile: &run, RunTag: "test-run"})
	if err != nil {
		t.Fatal(err)
	}
	// K=2: the searcher is asked for 3*2 = 6 chunks per query; query 2 and
	// query 10 come back short, query 1 fills 2 docs: no deepening.
	if !reflect.DeepEqual(s.depths, []int{6, 6, 6}) {
		t.Errorf("search depths = %v, want [6 6 6]", s.depths)
	}
	wantRun := "" +
		"1 Q0 d2 1 0.9 test-run\n" +
		"1 Q0 d1 2 0.8 test-run\n" +
		"2 Q0 d4 1 0.4 test-run\n" +
		"10 Q0 d4 1 0.6 test-run\n" +
		"10 Q0 d2 2 0.3 test-run\n"
	if run.String() != wantRun {
		t.Errorf("run file:\n%s\nwant:\n%s", run.String(), wantRun)
	}

	if rep.Dataset != "beir-tiny" || rep.Split != "test" || rep.K != 2 || rep.Queries != 3 {
		t.Errorf("header = %q %q k=%d queries=%d", rep.Dataset, rep.Split, rep.K, rep.Queries)
	}
	// Query 1: ranking [d2, d1], rel {d1:2, d2:1}.
	//   DCG@10 = 1/log2(2) + 2/log2(3) = 1 + 1.2618595 = 2.2618595
	//   IDCG@10 = 2 + 1/log2(3) = 2.6309298; nDCG = 0.8597...
	//   Recall@10 = 2/2 = 1; MRR@10 = 1 (d2 is relevant, grade 1).
	// Query 2: ranking [d4], rel {d3:1}: all 0.
	// Query 10: ranking [d4, d2] ("10" dropped), rel {d4:1, d2:0}:
	//   nDCG = 1, Recall = 1, MRR = 1.
	ndcg1 := (1 + 2/1.584962500721156) / (2 + 1/1.584962500721156)
	want := []BEIRQueryResult{
		{ID: "1", NDCG10: ndcg1, Recall10: 1, Recall100: 1, MRR10: 1, FirstRelevant: 1, Retrieved: 2},
		{ID: "2", Retrieved: 1},
		{ID: "10", NDCG10: 1, Recall10: 1, Recall100: 1, MRR10: 1, FirstRelevant: 1, Retrieved: 2},
	}
	if len(rep.PerQuery) != len(want) {
		t.Fatalf("PerQuery has %d rows, want %d", len(rep.PerQuery), len(want))
	}
	for i, w := range want {
		got := rep.PerQuery[i]
		if got.Latency <= 0 {
			t.Errorf("query %s: latency %v, want > 0", got.ID, got.Latency)
		}
		got.Latency = 0
		if got.ID != w.ID || !approx(got.NDCG10, w.NDCG10) || got.Recall10 != w.Recall10 ||
			got.Recall100 != w.Recall100 || got.MRR10 != w.MRR10 ||
			got.FirstRelevant != w.FirstRelevant || got.Retrieved != w.Retrieved {
			t.Errorf("PerQuery[%d] = %+v, want %+v", i, got, w)
		}
	}
	// Means over the three queries.
	if !approx(rep.NDCG10, (ndcg1+0+1)/3) || !approx(rep.Recall10, 2.0/3) ||
		!approx(rep.Recall100, 2.0/3) || !approx(rep.MRR10, 2.0/3) {
		t.Errorf("means: nDCG %v R@10 %v R@100 %v MRR %v", rep.NDCG10, rep.Recall10, rep.Recall100, rep.MRR10)
	}
	if rep.QueryP50 <= 0 || rep.QueryP50 > rep.QueryP95 || rep.QueryP95 > rep.QueryP99 {
		t.Errorf("latencies p50 %v p95 %v p99 %v", rep.QueryP50, rep.QueryP95, rep.QueryP99)
	}
}

func TestRunBEIRDeepensForManyChunksPerDoc(t *testing.T) {
	b := &BEIR{
		Queries: []Query{{ID: "q", Text: "query"}},
		Qrels:   map[string]map[string]int{"q": {"b": 1}},
	}
	// The first 6 chunks all belong to doc "a"; "b" is the 7th chunk.
	var hits []docent.Hit
	for i := range 6 {
		hits = append(hits, hit("beir:a", i, 1-float64(i)/10))
	}
	hits = append(hits, hit("beir:b", 0, 0.1))
	s := &fakeSearcher{hits: map[string][]docent.Hit{"query": hits}}
	rep, err := RunBEIR(context.Background(), b, s, BEIROptions{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	// 6 chunks held one doc, so the runner asked again for 12.
	if !reflect.DeepEqual(s.depths, []int{6, 12}) {
		t.Errorf("search depths = %v, want [6 12]", s.depths)
	}
	if got := rep.PerQuery[0]; got.Retrieved != 2 || got.FirstRelevant != 2 || !approx(got.MRR10, 0.5) {
		t.Errorf("PerQuery[0] = %+v, want 2 retrieved, b at rank 2", got)
	}
}

func TestRunBEIRDefaultsAndErrors(t *testing.T) {
	b := &BEIR{
		Queries: []Query{{ID: "q1", Text: "one"}, {ID: "q2", Text: "two"}},
		Qrels:   map[string]map[string]int{"q1": {"a": 1}, "q2": {"a": 1}},
	}
	t.Run("default depth and tag", func(t *testing.T) {
		var run bytes.Buffer
		s := &fakeSearcher{hits: map[string][]docent.Hit{"one": {hit("beir:a", 0, 2.5)}}}
		rep, err := RunBEIR(context.Background(), b, s, BEIROptions{RunFile: &run})
		if err != nil {
			t.Fatal(err)
		}
		if rep.K != 100 || !reflect.DeepEqual(s.depths, []int{300, 300}) {
			t.Errorf("K = %d, depths %v; want 100 and [300 300]", rep.K, s.depths)
		}
		if run.String() != "q1 Q0 a 1 2.5 docent\n" {
			t.Errorf("run file = %q", run.String())
		}
	})
	t.Run("searcher error names the query", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := RunBEIR(context.Background(), b, &fakeSearcher{err: boom}, BEIROptions{})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "query q1") {
			t.Errorf("err = %v, want boom naming query q1", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s := &fakeSearcher{}
		_, err := RunBEIR(ctx, b, s, BEIROptions{})
		if !errors.Is(err, context.Canceled) || len(s.depths) != 0 {
			t.Errorf("err = %v after %d searches, want context.Canceled before any", err, len(s.depths))
		}
	})
}

func TestSetIndexing(t *testing.T) {
	var r BEIRReport
	r.SetIndexing(500, 2_000_000_000)
	if r.IndexDocs != 500 || r.IndexDuration != 2_000_000_000 || r.IndexDocsPerSec != 250 {
		t.Errorf("SetIndexing: %+v", r)
	}
	r.SetIndexing(10, 0)
	if r.IndexDocsPerSec != 0 {
		t.Errorf("docs/s with zero duration = %v, want 0", r.IndexDocsPerSec)
	}
}

// TestLoadSciFact loads the real SciFact set when it sits beside the repo
// (../shared/eval/scifact from the repo root). It is CC BY-NC: read here,
// never copied into the repo.
func TestLoadSciFact(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "eval", "scifact")
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Skipf("SciFact not present at %s: %v", dir, err)
	}
	b, err := LoadBEIR(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Corpus) != 5183 {
		t.Errorf("corpus has %d docs, want 5183", len(b.Corpus))
	}
	if len(b.Queries) != 300 {
		t.Errorf("test split has %d queries, want 300", len(b.Queries))
	}
	judgments := 0
	for _, docs := range b.Qrels {
		judgments += len(docs)
	}
	if judgments != 339 {
		t.Errorf("test qrels have %d judgments, want 339", judgments)
	}
	if b.Queries[0].ID != "1" || b.Qrels["1"]["31715818"] != 1 {
		t.Errorf("first query %+v, qrels %v; want id 1 judging 31715818", b.Queries[0], b.Qrels["1"])
	}
	train, err := LoadBEIR(dir, "train")
	if err != nil {
		t.Fatal(err)
	}
	if len(train.Queries) != 809 {
		t.Errorf("train split has %d queries, want 809", len(train.Queries))
	}
}
