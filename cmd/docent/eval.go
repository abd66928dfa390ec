package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/search"
)

// Eval scores retrieval on a golden set (through the full answer pipeline)
// or on a BEIR data set. Each run builds its own throwaway index in a temp
// dir, so it never touches the serving index, unless --index-dir is given.
func (m *Main) Eval(ctx context.Context, args []string) error {
	fl := m.flagSet("eval")
	golden := fl.String("golden", "", "question set `FILE` (golden YAML), scored against the configured sources")
	beir := fl.String("beir", "", "BEIR data set `DIR` (corpus.jsonl, queries.jsonl, qrels/)")
	split := fl.String("split", "test", "BEIR qrels split: test or train")
	mode := fl.String("mode", "default", "BEIR retrieval mode: bm25, vector, hybrid, default (the full pipeline) or all")
	k := fl.Int("k", 100, "BEIR ranking depth in documents")
	runFile := fl.String("run", "", "write a TREC run `FILE` (BEIR, single mode)")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	indexDir := fl.String("index-dir", "", "build the index in `DIR` instead of a temp dir (reused if it exists)")
	fusion := fl.String("fusion", "", "override index.fusion: score or rrf")
	vectorWeight := fl.Float64("vector-weight", -1, "override index.vector_weight (default: the config's)")
	calibrate := fl.Bool("calibrate", false, "with --golden: propose the relevance threshold for the configured embedder "+
		"(the set is run with the gate open; the proposal answers the most questions correctly while declining >= 90% of the unanswerable ones)")
	half := fl.String("half", "", "with --golden: score only the questions at odd or even positions of the file "+
		"(develop on one half of a set, report the other)")
	judge := fl.Bool("judge", false, "with --golden: rate faithfulness and answer relevance with the configured answer model "+
		"(an offline word-overlap proxy, labelled as such, when the answerer is offline)")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("eval takes no arguments, got %q: %w", rest, errUsage)
	}
	if (*golden == "") == (*beir == "") {
		return fmt.Errorf("eval: give exactly one of --golden FILE or --beir DIR: %w", errUsage)
	}
	if (*calibrate || *judge || *half != "") && *golden == "" {
		return fmt.Errorf("eval: --calibrate, --judge and --half need --golden FILE: %w", errUsage)
	}
	if err := m.LoadConfig(); err != nil {
		return err
	}
	if *fusion != "" {
		m.Config.Index.Fusion = *fusion
	}
	if *vectorWeight >= 0 {
		m.Config.Index.VectorWeight = *vectorWeight
	}
	if err := m.Config.Validate(implementations()); err != nil {
		return err
	}
	dir := *indexDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "docent-eval-")
		if err != nil {
			return fmt.Errorf("eval: temp dir: %w", err)
		}
		defer func() {
			m.Close() // close the temp index before removing its files
			os.RemoveAll(tmp)
		}()
		dir = tmp
	}
	if *golden != "" {
		return m.evalGolden(ctx, goldenArgs{path: *golden, half: *half, json: *asJSON, calibrate: *calibrate, judge: *judge}, dir)
	}
	return m.evalBEIR(ctx, beirArgs{dir: *beir, split: *split, mode: *mode, k: *k, runFile: *runFile, json: *asJSON}, dir)
}

type goldenArgs struct {
	path, half             string
	json, calibrate, judge bool
}

// calibrationFloor is the threshold a calibration run uses: every
// question with a candidate passes the gate.
const calibrationFloor = 1e-9

func (m *Main) evalGolden(ctx context.Context, a goldenArgs, dataDir string) error {
	g, err := eval.LoadGolden(a.path)
	if err != nil {
		return err
	}
	if a.half != "" {
		if g, err = g.Half(a.half); err != nil {
			return err
		}
	}
	current, key := m.Config.EffectiveMinScore(), m.Config.MinScoreKey()
	if current == 0 {
		current = answer.DefaultMinScore
	}
	if a.calibrate {
		m.Config.Answerer.MinScore = calibrationFloor
	}
	if err := m.open(ctx, dataDir); err != nil {
		return err
	}
	if err := m.ensureIndexed(ctx, m.Sources); err != nil {
		return err
	}
	var opts eval.GoldenOptions
	if a.judge {
		if opts.Judge, err = judgeFor(m.env(dataDir)); err != nil {
			return err
		}
	}
	rep, err := eval.RunGoldenOptions(ctx, g, m.Pipeline, opts)
	if err != nil {
		return err
	}
	if a.calibrate {
		c := eval.Calibrate(rep, eval.DefaultMinDeclined, current)
		if a.json {
			return writeJSON(m.Stdout, struct {
				Key         string `json:"key"`
				Embedder    string `json:"embedder"`
				Calibration eval.Calibration
			}{key, m.Embedder.Name(), c})
		}
		fmt.Fprintf(m.Stdout, "embedder %s (%s)\n", m.Config.Embedder.Provider, m.Embedder.Name())
		return c.WriteTable(m.Stdout, key)
	}
	if a.json {
		return writeJSON(m.Stdout, rep)
	}
	return rep.WriteTable(m.Stdout)
}

type beirArgs struct {
	dir, split, mode, runFile string
	k                         int
	json                      bool
}

func (m *Main) evalBEIR(ctx context.Context, a beirArgs, dataDir string) error {
	modes := []string{a.mode}
	if a.mode == "all" {
		modes = []string{string(search.ModeKeyword), string(search.ModeVector), string(search.ModeHybrid), string(search.ModeDefault)}
	}
	if a.runFile != "" && len(modes) > 1 {
		return fmt.Errorf("eval: --run needs a single --mode")
	}
	for _, md := range modes {
		if _, err := search.ParseMode(md); err != nil {
			return err
		}
	}
	b, err := eval.LoadBEIR(a.dir, a.split)
	if err != nil {
		return err
	}
	m.Config.Sources = nil
	if err := m.open(ctx, dataDir); err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "indexing %d documents of %s...\n", len(b.Corpus), b.Name)
	start := time.Now()
	src := &staticSource{name: eval.BEIRSource, docs: b.Corpus}
	res, err := m.Engine.Sync(ctx, src, newProgressPrinter(m.Stderr))
	if err != nil {
		return fmt.Errorf("eval: index %s: %w", b.Name, err)
	}
	indexed := time.Since(start)
	if res.Added+res.Updated == 0 {
		indexed = 0 // reused an existing index: no indexing time to report
	}

	var reports []eval.BEIRReport
	for _, md := range modes {
		rep, err := m.runBEIR(ctx, b, md, a)
		if err != nil {
			return err
		}
		rep.Mode = md
		rep.SetIndexing(len(b.Corpus), indexed)
		reports = append(reports, rep)
	}
	if a.json {
		if len(reports) == 1 {
			return writeJSON(m.Stdout, reports[0])
		}
		return writeJSON(m.Stdout, reports)
	}
	if len(reports) == 1 {
		return reports[0].WriteTable(m.Stdout)
	}
	return eval.CompareTable(m.Stdout, reports...)
}

// runBEIR scores one mode, writing the TREC run file when asked.
func (m *Main) runBEIR(ctx context.Context, b *eval.BEIR, mode string, a beirArgs) (eval.BEIRReport, error) {
	opts := eval.BEIROptions{K: a.k, RunTag: "docent-" + mode}
	if a.runFile == "" {
		return eval.RunBEIR(ctx, b, m.searcher(mode), opts)
	}
	f, err := os.Create(a.runFile)
	if err != nil {
		return eval.BEIRReport{}, fmt.Errorf("eval: run file: %w", err)
	}
	opts.RunFile = f
	rep, err := eval.RunBEIR(ctx, b, m.searcher(mode), opts)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("eval: run file: %w", cerr)
	}
	return rep, err
}

// searcher returns the retrieval used for a BEIR mode: a single
// retriever, plain hybrid, or "default", the retrieval the answer pipeline
// uses (hybrid with vector feedback). Every mode goes through the one
// search.Retriever, which embeds the query once.
func (m *Main) searcher(mode string) eval.Searcher {
	return eval.SearcherFunc(func(ctx context.Context, query string, k int) ([]docent.Hit, error) {
		res, err := m.Retriever.Retrieve(ctx, search.Request{Text: query, K: k, Mode: search.Mode(mode)})
		return res.Hits, err
	})
}

// ensureIndexed syncs the sources when the index is empty.
func (m *Main) ensureIndexed(ctx context.Context, sources []connectors.Source) error {
	n, err := m.Index.Count(ctx)
	if err != nil || n > 0 {
		return err
	}
	results, err := m.SyncSources(ctx, sources, newProgressPrinter(m.Stderr))
	writeSyncSummary(m.Stderr, results)
	return err
}

// staticSource serves a fixed set of documents, always as a full listing.
type staticSource struct {
	name string
	docs []docent.Document
}

func (s *staticSource) Name() string { return s.name }

// List hands over every document: a complete listing.
func (s *staticSource) List(ctx context.Context, _ string, l connectors.Listing) (connectors.Listed, error) {
	for _, d := range s.docs {
		if err := l.Document(ctx, d); err != nil {
			return connectors.Listed{}, err
		}
	}
	return connectors.Listed{Complete: true}, nil
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return errors.Join(errors.New("encode json"), err)
	}
	return nil
}
