package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"

	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/answer"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/console"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/internal/redact"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/metrics"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/stale"
	"github.com/docent-hq/docent/store"
)

// Main is the command line: where a command reads its flags, writes its
// output and finds the environment, and the App it wires (embedded, so a
// command reads m.Store, m.Recorder, ...). Close releases everything.
type Main struct {
	// ConfigPath is the --config flag ("" to resolve by DOCENT_CONFIG or
	// ./docent.yaml).
	ConfigPath string
	// Stdout receives command output; Stderr logs and progress.
	Stdout io.Writer
	Stderr io.Writer
	// Stdin is where `docent admin hash-password` reads a password from.
	Stdin io.Reader
	// Getenv looks up environment variables (os.LookupEnv; tests pass a map).
	Getenv func(string) (string, bool)
	// Verbose is -v: log one step more than the default level.
	Verbose bool
	// OneShot is set for the commands that run once and exit (all but
	// serve): they log warnings only unless log.level or -v says more.
	OneShot bool
	// OnListen, when set, is called with the address serve listens on;
	// OnMetricsListen with the metrics address (server.metrics_addr).
	OnListen        func(addr string)
	OnMetricsListen func(addr string)
	// Retry is the retry policy of model providers; the zero value takes
	// llm's defaults (tests shorten the waits).
	Retry llm.Retry

	App

	closers []io.Closer
	unlock  func()
}

// App is the wired application: each part built by its opener from the
// parts it depends on.
type App struct {
	// Config is the resolved configuration, set by LoadConfig.
	Config config.Config
	// Log is the logger built from Config.Log.
	Log *slog.Logger
	// Metrics are the Prometheus instruments served on /metrics.
	Metrics *metrics.Metrics
	// Store is the SQLite registry, turns and sync runs.
	Store *store.DB
	// Index is the configured search backend.
	Index search.Index
	// Embedder embeds chunks and questions.
	Embedder search.Embedder
	// Retriever is the default retrieval over Index, the one the answer
	// pipeline and `eval --mode default` use.
	Retriever *search.Retriever
	// Engine syncs sources into Index and Store.
	Engine *connectors.Engine
	// Scheduler runs the scheduled syncs while serve runs (nil
	// otherwise); its RunNow is "sync now" and its Status each source's
	// progress and health.
	Scheduler *connectors.Scheduler
	// Sources are the configured sources, in config order.
	Sources []connectors.Source
	// LocalDocs are the file systems of sources that live on this machine,
	// served under /docs/{source}/ so their citations are clickable.
	LocalDocs map[string]fs.FS
	// Corpus holds the index statistics the offline answer stages use;
	// the engine invalidates it after every sync that changes the index.
	Corpus *offlineans.CorpusStats
	// Synonyms are the offline answerer's (nil for a model answerer); the
	// console adds entries to them.
	Synonyms *offlineans.Synonyms
	// OfflineGate is the offline answerer's gate (nil for a model
	// answerer): a calibration run fits its passage model.
	OfflineGate *offlineans.Gate
	// Pipeline answers questions; Recorder answers and stores each turn.
	Pipeline *answer.Pipeline
	Recorder *answer.Recorder
	// Stale derives each document's stale state in the sync and reads it
	// back (the console's page; chat answers).
	Stale *stale.Checker

	// docLinks signs the /docs links of chat answers when /docs needs a
	// token (nil otherwise: links are left as they are).
	docLinks *console.DocLinks

	// ready is serve's readiness, which the chat adapters and the
	// console's playground wait for before answering (nil: always ready).
	ready func() bool
	// admission is serve's admission control, shared by every entrance
	// (nil outside serve); loaded is closed once the index can answer.
	admission  *admission.Controller
	loaded     chan struct{}
	loadedOnce sync.Once
}

// LoadConfig resolves and validates the configuration and sets up logging.
func (m *Main) LoadConfig() error {
	cfg, _, err := config.Resolve(m.ConfigPath, m.Getenv, implementations())
	if err != nil {
		return err
	}
	m.Config = cfg
	m.Log = newLogger(m.Stderr, cfg.Log, logLevel(cfg.Log.Level, m.OneShot, m.Verbose))
	return nil
}

// logLevel is the level a command logs at: log.level when set; else info
// for serve and warn for a one-shot command, one step lower with -v.
func logLevel(configured string, oneShot, verbose bool) slog.Level {
	var level slog.Level
	if err := level.UnmarshalText([]byte(configured)); err == nil && configured != "" {
		if verbose {
			level = max(level-4, slog.LevelDebug)
		}
		return level
	}
	switch {
	case oneShot && !verbose:
		return slog.LevelWarn
	case oneShot || !verbose:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

func newLogger(w io.Writer, c config.LogConfig, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Open loads the configuration and wires the store, index, embedder,
// sources, sync engine and answer pipeline over the configured data dir.
func (m *Main) Open(ctx context.Context) error {
	if err := m.LoadConfig(); err != nil {
		return err
	}
	return m.open(ctx, m.Config.DataDir)
}

// env is what the openers get: the configuration, dataDir, the logger
// and the retry policy.
func (m *Main) env(dataDir string) env {
	return env{cfg: m.Config, dataDir: dataDir, log: m.Log, retry: m.Retry}
}

// open wires everything over dataDir; eval uses it with a temp dir.
func (m *Main) open(ctx context.Context, dataDir string) error {
	cfg := m.Config
	if err := prepareDataDir(dataDir); err != nil {
		return err
	}
	e := m.env(dataDir)
	m.Metrics = metrics.New()
	db, err := store.Open(ctx, filepath.Join(dataDir, "docent.db"))
	if err != nil {
		return err
	}
	m.closers = append(m.closers, db)
	m.Store = db

	emb, err := embedders[cfg.Embedder.Provider].open(e)
	if err != nil {
		return fmt.Errorf("embedder %s: %w", cfg.Embedder.Provider, err)
	}
	m.Embedder = emb

	idx, err := backends[cfg.Index.Backend].open(ctx, e, emb)
	if err != nil {
		return fmt.Errorf("index %s: %w", cfg.Index.Backend, err)
	}
	m.closers = append(m.closers, idx)
	m.Index = idx

	m.LocalDocs = map[string]fs.FS{}
	for _, sc := range cfg.Sources {
		src, fsys, err := sourceTypes[sc.Type].open(e, sc)
		if err != nil {
			return fmt.Errorf("source %q: %w", sc.Name, err)
		}
		m.Sources = append(m.Sources, src)
		if fsys != nil {
			m.LocalDocs[sc.Name] = fsys
		}
	}
	m.Corpus = offlineans.NewCorpusStats(idx)
	chunker := search.Chunker{TargetTokens: cfg.Chunker.TargetTokens, OverlapTokens: cfg.Chunker.OverlapTokens}
	m.Engine = connectors.NewEngine(db, idx, emb, chunker, m.Log, connectors.EngineOptions{
		MaxDocBytes:     int(cfg.Sync.MaxDocBytes),
		MaxChunksPerDoc: cfg.Sync.MaxChunksPerDoc,
		// Staged documents go to the data dir's disk, not a tmpfs /tmp.
		StageDir: dataDir,
	})
	// The answerer's corpus statistics and each document's stale state
	// (stored with its record, which chat and the console read) come
	// from the sync's corpus pass, in every mode (serve, sync).
	m.Stale = stale.New(db, stale.Options{MaxAgeDays: cfg.StaleAfterDays, ExcludePlatform: eval.GoldenPlatform, Log: m.Log})
	m.Engine.Derive(m.Corpus, m.Stale)

	m.Retriever, err = search.NewRetriever(idx, emb, search.RetrieverOptions{
		Fusion: search.Fusion{
			Method:        cfg.Index.Fusion,
			K:             float64(cfg.Index.RRFK),
			KeywordWeight: cfg.Index.KeywordWeight,
			VectorWeight:  cfg.Index.VectorWeight,
		},
		Candidates: cfg.Index.Candidates,
	})
	if err != nil {
		return err
	}
	ans, err := answerers[cfg.Answerer.Provider].open(e, answererDeps{corpus: m.Corpus, emb: emb})
	if err != nil {
		return fmt.Errorf("answerer %s: %w", cfg.Answerer.Provider, err)
	}
	m.Synonyms, m.OfflineGate = ans.synonyms, ans.gate
	stages := ans.stages
	stages.Retriever = m.Retriever
	if m.Pipeline, err = answer.New(stages, m.Log, answer.Options{Uncited: docent.Status(cfg.Answerer.Uncited)}); err != nil {
		return err
	}
	if err := m.loadTuning(ctx); err != nil {
		return fmt.Errorf("tuning stored from the console: %w", err)
	}
	secrets := cfg.Secrets()
	m.Recorder = answer.NewRecorder(m.Pipeline, db, m.Metrics, m.Log, func(s string) string {
		return redact.Secrets(redact.URLs(s), secrets...)
	})
	return nil
}

// source returns the configured source called name.
func (m *Main) source(name string) (connectors.Source, error) {
	var names []string
	for _, s := range m.Sources {
		if s.Name() == name {
			return s, nil
		}
		names = append(names, s.Name())
	}
	return nil, fmt.Errorf("no source named %q (configured: %s)", name, strings.Join(names, ", "))
}

// SyncSources syncs each source in turn; one failing source does not stop
// the others. The engine logs each run and its failure, once; SyncSources
// sets RunResult.Err of every result that failed and returns an error
// naming the sources that failed (ErrSyncFailed), not their reasons.
func (m *Main) SyncSources(ctx context.Context, sources []connectors.Source, progress func(connectors.Progress)) ([]docent.RunResult, error) {
	var results []docent.RunResult
	var failed []string
	for _, src := range sources {
		res, err := m.syncer().Sync(ctx, src, progress)
		if err != nil && res.Err == "" { // failed before the run was recorded
			res.Err = err.Error()
		}
		results = append(results, res)
		if err != nil {
			failed = append(failed, src.Name())
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(failed) == 0 {
		return results, nil
	}
	return results, fmt.Errorf("%w: %d of %d (%s)", errSyncFailed, len(failed), len(sources), strings.Join(failed, ", "))
}

// errSyncFailed is wrapped by SyncSources' error: the sources named failed,
// and the engine logged why.
var errSyncFailed = errors.New("sources failed to sync")

// syncer is the engine with every run counted in the metrics; the
// scheduler and the sync command both use it.
func (m *Main) syncer() connectors.Syncer {
	return meteredSyncer{engine: m.Engine, metrics: m.Metrics}
}

type meteredSyncer struct {
	engine  *connectors.Engine
	metrics *metrics.Metrics
}

func (s meteredSyncer) Sync(ctx context.Context, src connectors.Source, progress func(connectors.Progress)) (docent.RunResult, error) {
	start := time.Now()
	res, err := s.engine.Sync(ctx, src, progress)
	s.metrics.ObserveSync(src.Name(), err == nil, metrics.SyncCounts{
		Added: res.Added, Updated: res.Updated, Unchanged: res.Unchanged, Deleted: res.Deleted, Failed: res.Failed,
		Requests: res.Requests, Retries: res.Retries, RateLimited: res.RateLimited, Waited: res.Waited,
	}, time.Since(start))
	return res, err
}

// Close releases everything Open made, in reverse order.
func (m *Main) Close() error {
	var errs []error
	for i := len(m.closers) - 1; i >= 0; i-- {
		errs = append(errs, m.closers[i].Close())
	}
	m.closers = nil
	if m.unlock != nil {
		m.unlock()
		m.unlock = nil
	}
	return errors.Join(errs...)
}
