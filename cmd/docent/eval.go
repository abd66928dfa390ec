package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/config"
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
	calibrate := fl.Bool("calibrate", false, "with --golden: fit the offline answerer's decision rule (answerer.decision) on the set "+
		"(every question is answered; the rule answers the most correctly while declining >= 85% of the unanswerable ones, the mean over the corpora the sets ask of) and print the config")
	saveRows := fl.String("save-rows", "", "with --calibrate: also write the calibration rows to `PREFIX`.passages.jsonl and PREFIX.decision.jsonl")
	fit := fl.String("fit", "", "fit the passage model and the decision rule on rows saved with --save-rows (comma-separated `PREFIXES`; each weighs the same)")
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
	if *fit != "" && (*golden != "" || *beir != "") {
		return fmt.Errorf("eval: --fit takes no --golden or --beir: %w", errUsage)
	}
	if (*golden == "") == (*beir == "") && *fit == "" {
		return fmt.Errorf("eval: give exactly one of --golden FILE or --beir DIR: %w", errUsage)
	}
	if *saveRows != "" && !*calibrate {
		return fmt.Errorf("eval: --save-rows needs --calibrate: %w", errUsage)
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
	if *fit != "" {
		return m.evalFit(strings.Split(*fit, ","), *asJSON)
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
		return m.evalGolden(ctx, goldenArgs{path: *golden, half: *half, json: *asJSON, calibrate: *calibrate, judge: *judge, saveRows: *saveRows}, dir)
	}
	return m.evalBEIR(ctx, beirArgs{dir: *beir, split: *split, mode: *mode, k: *k, runFile: *runFile, json: *asJSON}, dir)
}

type goldenArgs struct {
	path, half, saveRows   string
	json, calibrate, judge bool
}

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
	if err := m.open(ctx, dataDir); err != nil {
		return err
	}
	if err := m.ensureIndexed(ctx, m.Sources); err != nil {
		return err
	}
	if a.calibrate {
		return m.calibrate(ctx, g, a)
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
	if a.json {
		return writeJSON(m.Stdout, rep)
	}
	return rep.WriteTable(m.Stdout)
}

// calibrate fits the offline answerer on g (see calibrateOn) with the
// CLI's pipeline, whose rule it sets aside for the run, and prints the
// config that sets the fit.
func (m *Main) calibrate(ctx context.Context, g *eval.Golden, a goldenArgs) error {
	if m.OfflineGate == nil {
		return fmt.Errorf("eval: --calibrate fits the offline answerer; a model answerer decides coverage itself: %w", errUsage)
	}
	set := a.path
	if a.half != "" {
		set += " (" + a.half + " half)"
	}
	current := m.Pipeline.Rule()
	m.Pipeline.SetRule(answer.Always{})
	defer m.Pipeline.SetRule(current)
	fit, err := calibrateOn(ctx, m.Pipeline, m.OfflineGate, g, set, corpusName(m.Config), m.Config.Answerer.Passage == nil, current, a.saveRows)
	if err != nil {
		return err
	}
	return m.writeFit(fit, a.json)
}

// calibrateOn fits the offline answerer on g through p, whose rule must
// answer every question (answer.Always) and whose gate is gate: unless
// keepPassage, the passage model first (every scored passage labelled
// by the question's facts or sections), set on gate, then the decision
// rule, measured with that passage model (each answer's features
// labelled by whether it was right). current is the rule in force,
// reported beside the fit; saveRows, when set, is the prefix the rows
// are written under.
func calibrateOn(ctx context.Context, p *answer.Pipeline, gate *offlineans.Gate, g *eval.Golden, set, corpus string,
	fitPassage bool, current answer.Rule, saveRows string) (eval.Fit, error) {
	var passage *eval.PassageFit
	if fitPassage {
		rows, err := passageRows(ctx, p, gate, g, set)
		if err != nil {
			return eval.Fit{}, err
		}
		if saveRows != "" {
			if err := writeRowsFile(saveRows+".passages.jsonl", func(w io.Writer) error { return eval.WritePassageRows(w, rows) }); err != nil {
				return eval.Fit{}, err
			}
		}
		bias, weights := eval.FitPassages(rows, offlineans.PassageFeatureNames)
		passage = &eval.PassageFit{Bias: bias, Weights: weights, Names: offlineans.PassageFeatureNames}
		gate.SetPassage(offlineans.PassageModel{Bias: bias, Weights: weights})
	}
	rep, err := eval.RunGolden(ctx, g, p)
	if err != nil {
		return eval.Fit{}, err
	}
	rows := eval.CalibrationRows(set, corpus, rep)
	if saveRows != "" {
		if err := writeRowsFile(saveRows+".decision.jsonl", func(w io.Writer) error { return eval.WriteRows(w, rows) }); err != nil {
			return eval.Fit{}, err
		}
	}
	fit := eval.FitDecision(rows, eval.DefaultMinDeclined, current)
	fit.Passage = passage
	return fit, nil
}

// corpusName names the docs a config asks of: its sources' names.
func corpusName(cfg config.Config) string {
	var names []string
	for _, s := range cfg.Sources {
		names = append(names, s.Name)
	}
	return strings.Join(names, "+")
}

// passageRows runs g through p and labels every passage gate scored.
func passageRows(ctx context.Context, p *answer.Pipeline, gate *offlineans.Gate, g *eval.Golden, set string) ([]eval.PassageRow, error) {
	byText := map[string]docent.GoldenQuestion{}
	for _, q := range g.Questions {
		byText[strings.TrimSpace(q.Question)] = q
	}
	var mu sync.Mutex
	var rows []eval.PassageRow
	gate.Observe(func(obs []offlineans.PassageObservation) {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range obs {
			q, ok := byText[strings.TrimSpace(o.Question)]
			if !ok || q.Kind == docent.KindUnanswerable {
				continue
			}
			if label, ok := eval.LabelPassage(q, o.Text, o.DocID, o.Section); ok {
				rows = append(rows, eval.PassageRow{Set: set, ID: q.ID, Label: label, Features: o.Features,
					Text: o.Text, Doc: o.DocID, Section: strings.Join(o.Section, " › ")})
			}
		}
	})
	defer gate.Observe(nil)
	if _, err := eval.RunGolden(ctx, g, p); err != nil {
		return nil, err
	}
	return rows, nil
}

// evalFit fits on rows saved with --save-rows PREFIX: the passage model
// on PREFIX.passages.jsonl when every prefix has one, and the decision
// rule on PREFIX.decision.jsonl (the decision rows are only as good as
// the passage model they were measured with: refit the rule after
// setting a new answerer.passage).
func (m *Main) evalFit(prefixes []string, asJSON bool) error {
	var dec, pass []string
	for _, p := range prefixes {
		dec = append(dec, p+".decision.jsonl")
		if _, err := os.Stat(p + ".passages.jsonl"); err == nil {
			pass = append(pass, p+".passages.jsonl")
		}
	}
	rows, err := eval.ReadRows(dec...)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("eval: --fit: no calibration rows in %s", strings.Join(dec, ", "))
	}
	fit := eval.FitDecision(rows, eval.DefaultMinDeclined, decision(m.Config))
	if len(pass) == len(prefixes) {
		prows, err := eval.ReadPassageRows(pass...)
		if err != nil {
			return err
		}
		bias, weights := eval.FitPassages(prows, offlineans.PassageFeatureNames)
		fit.Passage = &eval.PassageFit{Bias: bias, Weights: weights, Names: offlineans.PassageFeatureNames}
	}
	return m.writeFit(fit, asJSON)
}

func (m *Main) writeFit(f eval.Fit, asJSON bool) error {
	if asJSON {
		return writeJSON(m.Stdout, f)
	}
	return f.WriteTable(m.Stdout)
}

func writeRowsFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("eval: --save-rows: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
