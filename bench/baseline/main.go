// Command baseline is the standard engine docent's benchmark compares
// against: Bleve (github.com/blevesearch/bleve/v2) with its English
// analyzer and BM25 scoring, indexing a BEIR data set's title and text
// and answering each query with a match query (OR of the analyzed terms,
// Bleve's coordination factor included).
//
// It lives in its own Go module so that Bleve never enters docent's
// module or binary. `docent bench --baseline bin/baseline` runs it as
//
//	baseline --beir DIR --json
//
// and reads an eval.BenchReport from stdout: indexing throughput (a new
// on-disk index in a temp dir, batches of 1000, until searchable), peak
// RSS, and per query set (the test split and eval.LongKinds) the latency
// of top-10 searches and nDCG@10 / recall@100 at depth 100, scored by the
// same code as docent's (eval.RunBEIR).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
)

// Engine names what runs, for the report.
const Engine = "bleve v2.6.3 (BM25, en analyzer, match query)"

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("baseline", flag.ContinueOnError)
	dir := fl.String("beir", "", "BEIR data set directory")
	split := fl.String("split", "test", "qrels split")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("--beir DIR is required")
	}
	b, err := eval.LoadBEIR(*dir, *split)
	if err != nil {
		return err
	}
	sets, err := eval.WithLongQueries(b, 1)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bleve-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	debug.FreeOSMemory()
	_ = eval.ResetPeakRSS()
	start := time.Now()
	idx, err := build(filepath.Join(tmp, "index.bleve"), b.Corpus)
	if err != nil {
		return err
	}
	defer idx.Close()
	rep := eval.BenchReport{Engine: Engine, Dataset: b.Name, Docs: len(b.Corpus), Index: time.Since(start)}
	s := eval.SearcherFunc(func(ctx context.Context, q string, k int) ([]docent.Hit, error) {
		return search(ctx, idx, q, k)
	})
	for _, set := range sets {
		lat := make([]time.Duration, 0, len(set.Queries))
		for _, q := range set.Queries {
			t0 := time.Now()
			if _, err := s.Search(ctx, q.Text, 10); err != nil {
				return err
			}
			lat = append(lat, time.Since(t0))
		}
		r, err := eval.RunBEIR(ctx, set, s, eval.BEIROptions{K: 100})
		if err != nil {
			return err
		}
		name := *split
		if set != b {
			name = set.Split[len(*split)+1:]
		}
		rep.Runs = append(rep.Runs, eval.BenchRun{Mode: "bm25", Queries: name,
			Latency: eval.Summarize(lat), NDCG10: r.NDCG10, Recall100: r.Recall100})
	}
	rep.PeakRSS, _ = eval.PeakRSS()
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(rep)
	}
	return eval.WriteBenchReport(os.Stdout, rep)
}

// build indexes docs (title and text, English analyzer, BM25) at path.
func build(path string, docs []docent.Document) (bleve.Index, error) {
	m := mapping.NewIndexMapping()
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	idx, err := bleve.New(path, m)
	if err != nil {
		return nil, err
	}
	batch := idx.NewBatch()
	for i, d := range docs {
		if err := batch.Index(d.ID, map[string]string{"title": d.Title, "text": d.Body}); err != nil {
			idx.Close()
			return nil, err
		}
		if batch.Size() == 1000 || i == len(docs)-1 {
			if err := idx.Batch(batch); err != nil {
				idx.Close()
				return nil, err
			}
			batch = idx.NewBatch()
		}
	}
	return idx, nil
}

// search runs a match query over every field (Bleve's _all) for the top k.
func search(ctx context.Context, idx bleve.Index, text string, k int) ([]docent.Hit, error) {
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(text), k, 0, false)
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	hits := make([]docent.Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = docent.Hit{Chunk: docent.Chunk{ID: h.ID, DocID: h.ID}, Score: h.Score, KeywordScore: h.Score, KeywordRank: i + 1}
	}
	return hits, nil
}
