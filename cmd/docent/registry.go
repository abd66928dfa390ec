package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/llmstage"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/connectors/git"
	"github.com/docent-hq/docent/connectors/notion"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/examples/handbook"
	"github.com/docent-hq/docent/internal/wordnet"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/llm/gemini"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/llm/openai"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/store"
)

// The implementations this build can run, per seam, picked by their
// config name. A new source type, index backend or model provider is a
// package and one entry here (plus its config section); config
// validation reports any other name at its key and line.

// impl is one registered implementation: what it is, and its constructor.
type impl[T any] struct {
	// about says what the implementation is, for `docent config`.
	about string
	// open builds it from its dependencies.
	open T
}

// env is what every opener may read: the configuration, the data dir, the
// logger and the model providers' retry policy. What an opener builds on
// (the embedder, the corpus statistics) it takes as an argument.
type env struct {
	cfg     config.Config
	dataDir string
	log     *slog.Logger
	retry   llm.Retry
}

// publicURL is the configured public URL without a trailing slash.
func (e env) publicURL() string { return strings.TrimRight(e.cfg.Server.PublicURL, "/") }

// sourceOpener builds a source from its config. It also returns the
// source's file system when the documents live on this machine (served
// under /docs so their citations are clickable).
type sourceOpener func(e env, sc config.SourceConfig) (connectors.Source, fs.FS, error)

// backendOpener opens the index for vectors of emb.
type backendOpener func(ctx context.Context, e env, emb search.Embedder) (search.Index, error)

type embedderOpener func(e env) (search.Embedder, error)

// answererDeps are what an answerer is built on: the index's corpus
// statistics and the embedder.
type answererDeps struct {
	corpus *offlineans.CorpusStats
	emb    search.Embedder
}

// answererOpener returns the answer stages a provider serves (the
// Retriever is wired separately, the same for every provider).
type answererOpener func(e env, d answererDeps) (answerer, error)

var sourceTypes = map[string]impl[sourceOpener]{
	config.SourceBundled: {"connectors/files over the example handbook embedded in the binary", openBundled},
	config.SourceDir:     {"connectors/files over a local folder", openDir},
	config.SourceGit:     {"connectors/git: a remote or local git repository (go-git)", openGit},
	config.SourceConfluence: {"connectors/confluence: Confluence Cloud (REST v2) or Data Center (REST v1) spaces",
		openConfluence},
	config.SourceNotion: {"connectors/notion: the pages and databases shared with a Notion integration", openNotion},
}

var backends = map[string]impl[backendOpener]{
	config.BackendLocal:     {"search/local: a SQLite file in the data dir, in-memory BM25 keyword and vector indexes", openLocal},
	config.BackendTypesense: {"search/typesense: a Typesense cluster, versioned collections behind an alias", openTypesense},
}

var embedders = map[string]impl[embedderOpener]{
	config.ProviderOffline: {"llm/offline: word vectors learned from the indexed corpus (no network)", openOffline},
	config.ProviderGemini:  {"llm/gemini: Gemini embeddings (RETRIEVAL_DOCUMENT / RETRIEVAL_QUERY task types)", openGeminiEmbedder},
	config.ProviderOpenAI:  {"llm/openai: an OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM)", openOpenAIEmbedder},
}

var answerers = map[string]impl[answererOpener]{
	config.ProviderOffline: {"answer/offline: standalone rewrite (synonyms, docs' spellings, WordNet), page-order rerank, evidence gate, calibrated rule, extractive quotes, citation check", openOfflineAnswerer},
	config.ProviderGemini:  {"answer/llmstage over llm/gemini: model rewrite, model rerank, plausibility pre-check, the model decides coverage, grounded answer, citation check", openModelAnswerer},
	config.ProviderOpenAI:  {"answer/llmstage over llm/openai: model rewrite, model rerank, plausibility pre-check, the model decides coverage, grounded answer, citation check", openModelAnswerer},
}

// implementations tells config validation what this build can run.
func implementations() config.Implementations {
	return config.Implementations{
		Sources:   slices.Sorted(maps.Keys(sourceTypes)),
		Backends:  slices.Sorted(maps.Keys(backends)),
		Embedders: slices.Sorted(maps.Keys(embedders)),
		Answerers: slices.Sorted(maps.Keys(answerers)),
		Features:  answer.FeatureNames,

		PassageFeatures: offlineans.PassageFeatureNames,
	}
}

// Seam is the implementation one seam got, as `docent config` shows it.
type Seam struct {
	// Seam is the seam ("index", "embedder", "answerer", "source NAME").
	Seam string
	// Name is the implementation's config name; About says what it is.
	Name, About string
}

// seams returns the implementation each seam gets under cfg.
func seams(cfg config.Config) []Seam {
	out := []Seam{
		{"index", cfg.Index.Backend, backends[cfg.Index.Backend].about},
		{"embedder", cfg.Embedder.Provider, embedders[cfg.Embedder.Provider].about},
		{"answerer", cfg.Answerer.Provider, answerers[cfg.Answerer.Provider].about},
	}
	for _, s := range cfg.Sources {
		out = append(out, Seam{"source " + s.Name, s.Type, sourceTypes[s.Type].about})
	}
	return append(out, chatSeams(cfg)...)
}

// formatSeams renders seams as YAML comments, one per line.
func formatSeams(ss []Seam) string {
	var b strings.Builder
	b.WriteString("# implementations in use:\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "#   %-18s %s — %s\n", s.Seam+":", s.Name, s.About)
	}
	return b.String()
}

func openBundled(e env, sc config.SourceConfig) (connectors.Source, fs.FS, error) {
	fsys := handbook.Source()
	return files.New(sc.Name, fsys, files.Options{
		WebURL:   e.publicURL() + "/docs/" + sc.Name + "/{path}",
		MaxBytes: int(e.cfg.Sync.MaxDocBytes),
	}), fsys, nil
}

func openDir(e env, sc config.SourceConfig) (connectors.Source, fs.FS, error) {
	fsys := files.Dir(sc.Dir.Path)
	web := sc.Dir.WebURL
	if web == "" {
		web = e.publicURL() + "/docs/" + sc.Name + "/{path}"
	}
	return files.New(sc.Name, fsys, files.Options{
		Include: sc.Dir.Include, Exclude: sc.Dir.Exclude, WebURL: web, MaxBytes: int(e.cfg.Sync.MaxDocBytes),
	}), fsys, nil
}

func openGit(e env, sc config.SourceConfig) (connectors.Source, fs.FS, error) {
	g := sc.Git
	src, err := git.New(sc.Name, git.Options{
		URL: g.URL, Path: g.Path, Branch: g.Branch, Subdir: g.Subdir,
		Include: g.Include, Exclude: g.Exclude, WebURL: g.WebURL,
		Auth:    git.Auth{Username: g.Username, Token: g.Token},
		DataDir: e.dataDir, MaxBytes: int(e.cfg.Sync.MaxDocBytes), Logger: e.log,
	})
	return src, nil, err
}

func openConfluence(e env, sc config.SourceConfig) (connectors.Source, fs.FS, error) {
	c := sc.Confluence
	src, err := confluence.New(sc.Name, confluence.Options{
		BaseURL: c.BaseURL, Flavor: confluence.Flavor(c.Flavor), Email: c.Email, Token: c.Token,
		Spaces: c.Spaces, ExcludeLabels: c.ExcludeLabels, Roots: c.Roots, Overlap: c.Overlap,
		RequestsPerSecond: c.RequestsPerSecond, MaxBytes: int(e.cfg.Sync.MaxDocBytes), Logger: e.log,
	})
	return src, nil, err
}

func openNotion(e env, sc config.SourceConfig) (connectors.Source, fs.FS, error) {
	n := sc.Notion
	src, err := notion.New(sc.Name, notion.Options{
		APIURL: n.APIURL, Token: n.Token, Roots: n.Roots, Overlap: n.Overlap,
		RequestsPerSecond: n.RequestsPerSecond, MaxBytes: int(e.cfg.Sync.MaxDocBytes), Logger: e.log,
	})
	return src, nil, err
}

func openLocal(ctx context.Context, e env, emb search.Embedder) (search.Index, error) {
	path := filepath.Join(e.dataDir, indexFile(e.cfg, emb))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		others, _ := filepath.Glob(filepath.Join(e.dataDir, "index*.db"))
		if len(others) > 0 {
			e.log.Info("new index version for this embedder; the next sync embeds every document into it",
				slog.String("index", filepath.Base(path)), slog.Any("other_versions", others))
		}
	}
	return local.Open(ctx, path, local.Options{})
}

// indexFile names the local index after the embedder: index.db for the
// offline embedder (which retrains and re-embeds in place, under the
// sync engine's exclusive lock), index-<embedder name>.db for a model
// provider, whose name holds the model and dimension. Changing either
// opens a new, empty index version that the next sync fills with a full
// re-embed; the old file is left as it was (switching back reuses it), so
// no index ever mixes vectors of two embedders.
func indexFile(cfg config.Config, emb search.Embedder) string {
	if cfg.Embedder.Provider == config.ProviderOffline || emb == nil {
		return "index.db"
	}
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '-'
	}, emb.Name())
	return "index-" + slug + ".db"
}

func openTypesense(ctx context.Context, e env, emb search.Embedder) (search.Index, error) {
	dim := 0
	if emb != nil {
		dim = emb.Dim()
	}
	return typesense.Open(ctx, typesenseOptions(e, dim))
}

// typesenseOptions maps the index.typesense section (and the embedder's
// dimension, so that the alias exists before the first sync) to the
// backend's options.
func typesenseOptions(e env, dim int) typesense.Options {
	ts := e.cfg.Index.Typesense
	retries := ts.Retries
	if retries == 0 {
		retries = -1 // the backend's 0 means one retry per other node
	}
	types := map[string]string{}
	for _, s := range e.cfg.Sources {
		types[s.Name] = s.Type
	}
	return typesense.Options{
		Nodes: ts.Nodes, NearestNode: ts.NearestNode, APIKey: ts.APIKey, Alias: ts.Collection,
		Timeout: ts.Timeout, Retries: retries, Dim: dim, SourceTypes: types, Logger: e.log,
	}
}

func openOffline(e env) (search.Embedder, error) {
	return offline.NewEmbedder(offline.Options{
		Dim: e.cfg.Embedder.Dim, ModelPath: filepath.Join(e.dataDir, "offline-embedder.bin"), Logger: e.log,
	}), nil
}

// answerer is what an answerer opener builds: the stages and, for the
// offline answerer, the parts the console's tuner and calibration adjust.
type answerer struct {
	stages answer.Stages
	// synonyms and gate are the offline answerer's (nil otherwise).
	synonyms *offlineans.Synonyms
	gate     *offlineans.Gate
}

func openOfflineAnswerer(e env, d answererDeps) (answerer, error) {
	syn, err := synonyms(e.cfg)
	if err != nil {
		return answerer{}, err
	}
	st := offlineans.NewStages(nil, offlineOptions(e, d, syn))
	g, _ := st.Gate.(*offlineans.Gate)
	return answerer{stages: st, synonyms: syn, gate: g}, nil
}

// offlineOptions are the offline answerer's options under e's config.
func offlineOptions(e env, d answererDeps, syn *offlineans.Synonyms) offlineans.Options {
	return offlineans.Options{
		Corpus: d.corpus, Synonyms: syn, Related: wnRelated(), MaxSources: e.cfg.Answerer.MaxSources,
		Decision: decision(e.cfg), Passage: passageModel(e.cfg), Embedder: localEmbedder(d.emb), Log: e.log,
	}
}

// localEmbedder is the embedder the offline gate may embed passages
// with: the offline one, which costs nothing per call; nil for a hosted
// embedder.
func localEmbedder(emb search.Embedder) offlineans.Embedder {
	if e, ok := emb.(*offline.Embedder); ok {
		return e
	}
	return nil
}

// passageModel is the offline answerer's passage model:
// answerer.passage, else the built-in one.
func passageModel(cfg config.Config) offlineans.PassageModel {
	p := cfg.Answerer.Passage
	if p == nil {
		return offlineans.DefaultPassage
	}
	return offlineans.PassageModel{Bias: p.Bias, Weights: p.Weights}
}

// synonyms reads answerer.synonyms, and the bundled handbook's own when a
// bundled source is configured.
func synonyms(cfg config.Config) (*offlineans.Synonyms, error) {
	var syn *offlineans.Synonyms
	var err error
	if cfg.Answerer.Synonyms != "" {
		if syn, err = offlineans.LoadSynonyms(cfg.Answerer.Synonyms); err != nil {
			return nil, err
		}
	} else {
		syn = &offlineans.Synonyms{}
	}
	for _, s := range cfg.Sources {
		if s.Type != config.SourceBundled {
			continue
		}
		hb, err := offlineans.ParseSynonyms("examples/handbook/synonyms.txt", bytes.NewReader(handbook.Synonyms))
		if err != nil {
			return nil, err
		}
		syn.Merge(hb)
		break
	}
	return syn, nil
}

// decision is the offline answerer's rule: answerer.decision, else the
// built-in one.
func decision(cfg config.Config) answer.Logistic {
	d := cfg.Answerer.Decision
	if d == nil {
		return offlineans.DefaultDecision
	}
	return answer.Logistic{Bias: d.Bias, Weights: d.Weights, AnswerAt: d.AnswerAt, NotFoundAt: d.NotFoundAt}
}

func geminiOptions(e env) gemini.Options {
	g := e.cfg.LLM.Gemini
	return gemini.Options{
		APIKey: g.APIKey, BaseURL: g.BaseURL, Model: g.Model, EmbeddingModel: g.EmbeddingModel,
		Dimensions: g.Dimensions, Temperature: g.Temperature, MaxOutputTokens: g.MaxOutputTokens,
		Timeout: g.Timeout, Retry: e.retry, Logger: e.log,
	}
}

func openAIOptions(e env) openai.Options {
	o := e.cfg.LLM.OpenAI
	return openai.Options{
		BaseURL: o.BaseURL, APIKey: o.APIKey, Model: o.Model, EmbeddingModel: o.EmbeddingModel,
		Dimensions: o.Dimensions, Temperature: o.Temperature, MaxOutputTokens: o.MaxOutputTokens,
		Timeout: o.Timeout, Retry: e.retry, Logger: e.log,
	}
}

func openGeminiEmbedder(e env) (search.Embedder, error) {
	return gemini.NewEmbedder(context.Background(), geminiOptions(e))
}

func openOpenAIEmbedder(e env) (search.Embedder, error) {
	return openai.NewEmbedder(openAIOptions(e))
}

// chatModels builds the language model of each model provider.
var chatModels = map[string]func(e env) (llm.Model, error){
	config.ProviderGemini: func(e env) (llm.Model, error) {
		return gemini.NewModel(context.Background(), geminiOptions(e))
	},
	config.ProviderOpenAI: func(e env) (llm.Model, error) { return openai.NewModel(openAIOptions(e)) },
}

// openModelAnswerer builds the answer stages over the answerer's model
// (answer/llmstage; never the offline answerer's rules).
func openModelAnswerer(e env, _ answererDeps) (answerer, error) {
	model, err := chatModels[e.cfg.Answerer.Provider](e)
	if err != nil {
		return answerer{}, err
	}
	return answerer{stages: modelStages(e, model)}, nil
}

// judgeFor returns the judge of `docent eval --judge`: the answer model,
// or the offline proxy when the answerer is offline.
func judgeFor(e env) (eval.Judge, error) {
	open, ok := chatModels[e.cfg.Answerer.Provider]
	if !ok {
		return eval.OfflineJudge{}, nil
	}
	model, err := open(e)
	if err != nil {
		return nil, err
	}
	return llmstage.NewJudge(model), nil
}

// modelStages are the answer stages over a language model: it rewrites
// follow-ups and multi-part questions, reranks (unless answerer.rerank is
// off) and, for every question with any plausible evidence, writes the
// grounded answer or says the sources do not hold it.
func modelStages(e env, model llm.Model) answer.Stages {
	a := e.cfg.Answerer
	return llmstage.NewStages(model, nil, llmstage.StagesOptions{
		Rewriter:  llmstage.RewriterOptions{Turns: a.HistoryTurns, HyDE: a.HyDE},
		NoRerank:  a.Rerank == config.RerankOff,
		Plausible: answer.Plausible{MaxSources: a.MaxSources, MinCosine: a.MinCosine},
		Log:       e.log,
	})
}

// Registry is the document registry the sync engine records into, and
// the run history the scheduler's health starts from.
var (
	_ connectors.Registry    = (*store.DB)(nil)
	_ connectors.HealthStore = (*store.DB)(nil)
)

func wnRelated() func(string, string) []string {
	if os.Getenv("DOCENT_WN") == "off" {
		return nil
	}
	return wordnet.Related
}
