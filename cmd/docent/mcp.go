package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/console"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/mcp"
)

// MCP serves one MCP client over stdin and stdout (a client such as
// Claude Desktop launches `docent mcp`), reading the same config and data
// dir as serve. It never holds the data dir's lock while it serves: when
// another docent (serve, sync) has it, mcp reads the index that process
// keeps and follows its syncs; when it is alone, it syncs the sources
// once, in the background, under the lock, and lets the lock go. Logs go
// to stderr: stdout carries the protocol only.
func (m *Main) MCP(ctx context.Context, args []string) error {
	fl := m.flagSet("mcp")
	every := fl.Duration("follow-every", followGap, "reload an index another docent is syncing at most this often (0: before every call)")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("mcp: %w: it takes no arguments (it speaks MCP on stdin and stdout)", errUsage)
	}
	// Alone on the data dir, mcp opens it and syncs under the lock (any
	// migration at open happens under it too), then lets it go; beside
	// another docent it opens what that process keeps, which writes
	// nothing while the schema is current, and never writes to the index.
	if err := m.LoadConfig(); err != nil {
		return err
	}
	unlock, err := lockDataDir(m.Config.DataDir)
	alone := err == nil
	if err != nil && !errors.Is(err, errDataDirBusy) {
		return fmt.Errorf("mcp: %w", err)
	}
	if alone {
		release := sync.OnceFunc(unlock)
		defer release()
		unlock = release
	}
	if err := m.Open(ctx); err != nil {
		return err
	}
	follow := &indexFollower{m: m, minGap: *every, now: time.Now}
	var ready atomic.Bool
	isReady := func() bool {
		if ready.Load() {
			return true
		}
		n, err := m.Index.Count(context.Background())
		if err != nil || n == 0 {
			return false
		}
		// The first chunks another process indexed: read them now,
		// whatever the gap.
		if err := follow.catchUp(context.Background()); err != nil {
			m.Log.Error("mcp: read the index", slog.Any("error", err))
			return false
		}
		ready.Store(true)
		return true
	}
	srv, err := m.mcpServer(mcp.Options{Ready: isReady, Refresh: follow.refresh})
	if err != nil {
		return err
	}

	syncCtx, cancelSync := context.WithCancel(context.WithoutCancel(ctx))
	var syncing sync.WaitGroup
	if alone {
		syncing.Go(func() {
			defer unlock()
			m.syncAlone(syncCtx)
		})
	} else {
		m.Log.Info("mcp: another docent syncs this data dir; reading the index it keeps")
	}
	defer func() {
		cancelSync() // an interrupted sync converges on the next run
		syncing.Wait()
		follow.wait()
	}()

	m.Log.Info("mcp: serving on stdio", slog.String("data_dir", m.Config.DataDir))
	in, out := io.NopCloser(m.Stdin), nopWriteCloser{m.Stdout}
	return srv.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
}

// followGap is how often `docent mcp` at least waits between two checks
// of an index that another process is syncing (--follow-every); see
// indexFollower for the longer gap a slow reload brings.
const followGap = 3 * time.Second

// syncAlone syncs every source, for a `docent mcp` that holds the data
// dir's lock; the caller lets the lock go after.
func (m *Main) syncAlone(ctx context.Context) {
	if _, err := m.Store.AbandonRuns(ctx); err != nil {
		m.Log.Error("mcp: abandoned runs", slog.Any("error", err))
		return
	}
	m.Log.Info("mcp: no other docent on this data dir; syncing the sources")
	results, err := m.SyncSources(ctx, m.Sources, nil)
	for _, r := range results {
		if r.Err == "" {
			m.Log.Info("mcp: synced", slog.String("source", r.Source), slog.Int("added", r.Added),
				slog.Int("updated", r.Updated), slog.Int("deleted", r.Deleted), slog.Int("failed", r.Failed))
		}
	}
	if err != nil && ctx.Err() == nil {
		m.Log.Warn("mcp: some sources failed to sync; answering from what is indexed", slog.Any("error", err))
	}
}

// indexFollower keeps `docent mcp`'s index, corpus statistics and offline
// embedder in step with the syncs of another process. A reload reads the
// whole index (seconds for a large one), so refresh starts it in the
// background, where calls go on with the state they have until the new
// one is swapped in, and checks at most once per gap: minGap, or ten
// times the last reload, whichever is longer, so that a reader spends at
// most a tenth of its time reloading while a long sync runs.
type indexFollower struct {
	m      *Main
	minGap time.Duration
	now    func() time.Time

	mu      sync.Mutex
	last    time.Time     // when the last check started
	took    time.Duration // how long the last check took
	running bool
	wg      sync.WaitGroup
}

// refresher is an index that may be written by another process
// (search/local); a remote index (Typesense) is always current, and only
// the offline model beside it is followed.
type refresher interface {
	Refresh(ctx context.Context) (bool, error)
}

// refresh starts a check (and reload) in the background unless one runs
// or the last began less than a gap ago. It never fails the call: a
// failed reload is logged and the old state kept.
func (f *indexFollower) refresh(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if f.running || (!f.last.IsZero() && now.Sub(f.last) < max(f.minGap, 10*f.took)) {
		return nil
	}
	f.last, f.running = now, true
	f.wg.Go(func() {
		start := f.now()
		err := f.follow(context.Background())
		took := f.now().Sub(start)
		f.mu.Lock()
		f.running, f.took = false, took
		f.mu.Unlock()
		if err != nil {
			f.m.Log.Error("mcp: reload the index", slog.Any("error", err))
		}
	})
	return nil
}

// catchUp waits for a check in progress, then checks and reloads now:
// for the first chunks of an index that was empty.
func (f *indexFollower) catchUp(ctx context.Context) error {
	f.wg.Wait()
	return f.follow(ctx)
}

// wait waits for a check in progress (before the index is closed).
func (f *indexFollower) wait() { f.wg.Wait() }

// follow reloads what changed: the index when another process wrote to
// it, the offline model when a sync retrained it, and then the corpus
// statistics.
func (f *indexFollower) follow(ctx context.Context) error {
	changed := false
	r, local := f.m.Index.(refresher)
	if local {
		var err error
		if changed, err = r.Refresh(ctx); err != nil {
			return err
		}
	}
	// A sync that retrained the offline model wrote it before any chunk;
	// Reload only stats the file when it has not changed.
	if e, ok := f.m.Embedder.(*offline.Embedder); ok && (changed || !local) {
		changed = e.Reload() || changed
	}
	if changed {
		f.m.Corpus.Invalidate()
	}
	return nil
}

// mcpServer builds the MCP server over the wired pipeline; opts brings
// what the entrance adds (readiness, admission, rate, refresh, metrics).
func (m *Main) mcpServer(opts mcp.Options) (*mcp.Server, error) {
	for _, sc := range m.Config.Sources {
		opts.Sources = append(opts.Sources, sc.Name)
	}
	opts.Asker, opts.Retriever, opts.Documents, opts.Chunks = m.Recorder, m.Retriever, m.Store, m.Index
	opts.Format, opts.PublicURL, opts.Log = answer.Format, m.Config.Server.PublicURL, m.Log
	return mcp.New(opts)
}

// routeMCP serves MCP's streamable HTTP at /mcp on serve, behind the
// API's token guard (each tool call charged to the token's rate) and
// through the API's admission limiter.
func (m *Main) routeMCP(mux *http.ServeMux, guard *console.APIGuard) error {
	opts := mcp.Options{Ready: m.ready, Rate: guard, OnShed: m.shedNotReady(mcp.Platform)}
	if m.admission != nil {
		opts.Admission = m.admission
	}
	srv, err := m.mcpServer(opts)
	if err != nil {
		return err
	}
	mux.Handle("/mcp", guard.Authenticate(srv.Handler()))
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
