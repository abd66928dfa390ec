package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/docent-hq/docent"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// Serve syncs when the index is empty, then serves HTTP until ctx ends,
// running scheduled syncs meanwhile. On SIGINT/SIGTERM it stops accepting
// requests, lets in-flight ones finish (server.shutdown_timeout), cancels
// running syncs and waits for them before closing the index.
func (m *Main) Serve(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(m.Stderr)
	addr := fl.String("addr", "", "listen address (default server.addr from config, :8080)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if err := m.Open(ctx); err != nil {
		return err
	}
	if err := m.lockForWrites(); err != nil {
		return err
	}
	if *addr == "" {
		*addr = m.Config.Server.Addr
	}

	var docs *api.Docs
	if len(m.LocalDocs) > 0 {
		docs = api.NewDocs(m.LocalDocs, m.liveDoc)
	}
	server := api.New(m.Recorder, answer.Format, m.Metrics.Registry, docs, m.Log)
	if hc, ok := m.Index.(search.HealthChecker); ok {
		server.SetCheck(hc.Health) // a remote index: ready only while it can serve
	}
	sched := connectors.NewScheduler(readySyncer{m.syncer(), server}, m.Log,
		connectors.SchedulerOptions{Workers: m.Config.Sync.Workers})
	for _, sc := range m.Config.Sources {
		spec := sc.Schedule
		if spec == "" {
			spec = m.Config.Sync.Schedule
		}
		if config.ScheduleOff(spec) {
			continue
		}
		src, err := m.source(sc.Name)
		if err != nil {
			return err
		}
		if err := sched.Add(src, spec); err != nil {
			return fmt.Errorf("serve: schedule source %s: %w", sc.Name, err)
		}
	}

	handler, web, err := m.webHandler(ctx, *addr, server.Handler(), sched)
	if err != nil {
		return err
	}
	defer web.Close()
	stopMetrics, err := m.serveMetrics(ctx)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", *addr, err)
	}
	if m.OnListen != nil {
		m.OnListen(ln.Addr().String())
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      api.AskTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	m.Log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("public_url", m.Config.Server.PublicURL))

	// Syncs run under their own context, cancelled after HTTP has drained.
	syncCtx, cancelSyncs := context.WithCancel(context.WithoutCancel(ctx))
	var syncs sync.WaitGroup
	syncs.Go(func() {
		if m.initialSync(syncCtx) {
			server.SetReady(true)
		}
		if err := sched.Start(syncCtx); err != nil {
			m.Log.Error("start scheduler", slog.Any("error", err))
			return
		}
		sched.Wait()
	})

	select {
	case err = <-serveErr:
		err = fmt.Errorf("serve: http: %w", err)
	case <-ctx.Done():
		m.Log.Info("shutting down")
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), m.Config.Server.ShutdownTimeout)
	defer stop()
	if serr := srv.Shutdown(shutdownCtx); serr != nil {
		m.Log.Warn("in-flight requests did not finish in time; closing", slog.Any("error", serr))
		_ = srv.Close()
	}
	web.Close() // a golden run in progress is recorded as failed
	cancelSyncs()
	syncs.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// initialSync syncs every source when the index holds nothing yet. It
// reports whether the index then holds something to answer from.
func (m *Main) initialSync(ctx context.Context) bool {
	n, err := m.Index.Count(ctx)
	if err != nil {
		m.Log.Error("count index", slog.Any("error", err))
		return false
	}
	if n > 0 {
		m.Log.Info("index loaded", slog.Int("chunks", n))
		return true
	}
	m.Log.Info("index is empty: syncing all sources")
	results, err := m.SyncSources(ctx, m.Sources, nil)
	for _, r := range results {
		m.Log.Info("synced", slog.String("source", r.Source), slog.Int("added", r.Added),
			slog.Int("updated", r.Updated), slog.Int("deleted", r.Deleted), slog.Int("failed", r.Failed))
	}
	if err != nil {
		m.Log.Error("initial sync", slog.Any("error", err))
	}
	n, cerr := m.Index.Count(ctx)
	if cerr != nil || n == 0 {
		m.Log.Warn("index is still empty: not ready until a sync succeeds")
		return false
	}
	return true
}

// liveDoc reports whether a document is live in the registry.
func (m *Main) liveDoc(ctx context.Context, id string) (bool, error) {
	rec, err := m.Store.Document(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return rec.DeletedAt.IsZero(), nil
}

// readySyncer marks the server ready after the first successful sync, for
// a server that started with an empty index.
type readySyncer struct {
	connectors.Syncer
	server *api.Server
}

func (s readySyncer) Sync(ctx context.Context, src connectors.Source, progress func(connectors.Progress)) (docent.RunResult, error) {
	res, err := s.Syncer.Sync(ctx, src, progress)
	if err == nil {
		s.server.SetReady(true)
	}
	return res, err
}
