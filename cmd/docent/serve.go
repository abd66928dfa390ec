package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/internal/memtrim"
	"github.com/docent-hq/docent/metrics"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// Serve syncs when the index is empty, then serves HTTP until ctx ends,
// running scheduled syncs meanwhile. On SIGINT/SIGTERM it stops accepting
// requests, lets in-flight ones finish (server.shutdown_timeout), cancels
// running syncs and waits for them before closing the index.
func (m *Main) Serve(ctx context.Context, args []string) error {
	fl := m.flagSet("serve")
	addr := fl.String("addr", "", "listen `ADDRESS` (default server.addr, which defaults to localhost:8080: this machine only)")
	retainDays := fl.Int("retain-days", int(store.DefaultRetention.MaxAge/(24*time.Hour)),
		"delete turns (questions, answers, traces) older than this many days; 0 keeps them")
	retainTurns := fl.Int("retain-turns", store.DefaultRetention.MaxTurns, "keep at most this many turns, the newest; 0 for no cap")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("serve takes no arguments, got %q: %w", rest, errUsage)
	}
	retention := store.Retention{MaxAge: time.Duration(*retainDays) * 24 * time.Hour, MaxTurns: *retainTurns}
	if err := m.LoadConfig(); err != nil {
		return err
	}
	// --addr moves the server, and public_url with it unless configured
	// (links are made from it before listening, so a port picked at
	// listen time, :0, leaves it be).
	if _, port, _ := net.SplitHostPort(*addr); *addr != "" && port != "0" {
		m.Config.Server.Listen(*addr)
	}
	if *addr == "" {
		*addr = m.Config.Server.Addr
	}
	if err := m.open(ctx, m.Config.DataDir); err != nil {
		return err
	}
	if err := m.lockForWrites(); err != nil {
		return err
	}
	m.seedTurnMetrics(ctx)

	var docs *api.Docs
	if len(m.LocalDocs) > 0 {
		docs = api.NewDocs(m.LocalDocs, m.liveDoc, api.DocsOptions{Log: m.Log})
	}
	// Readiness is the sync side's: loaded when the index holds chunks or
	// a sync lands; a remote index is ready only while it can serve.
	var health func(context.Context) error
	if hc, ok := m.Index.(search.HealthChecker); ok {
		health = hc.Health
	}
	adm := m.openAdmission()
	ready := connectors.NewReadiness(health, func() {
		m.Log.Info("ready", slog.String("url", m.Config.Server.PublicURL))
		m.markLoaded() // the chat cores answer the questions they held
	})
	m.ready = ready.Loaded // the console's playground and the chat adapters wait for it too
	server := api.New(m.Recorder, answer.Format, m.Metrics.Registry, docs, m.Log,
		api.Options{Admission: adm, OnShed: m.shedNotReady("api"), Ready: ready, Feedback: m.Store,
			Flags: m.Stale.Flagged})
	server.AddCheck(m.Store.WriteHealth) // not ready while writes keep failing (a full disk)
	sched := connectors.NewScheduler(ready.Syncer(m.syncer()), m.Log, connectors.SchedulerOptions{
		Workers: m.Config.Sync.Workers,
		History: m.Store,
		OnHealth: func(source string, h connectors.Health) {
			m.Metrics.SetSyncHealth(source, metrics.SyncHealth{ConsecutiveFailures: h.ConsecutiveFailures,
				LastSuccess: h.LastSuccess, Stale: h.Stale})
		},
	})
	m.Scheduler = sched
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
	chats, err := m.openChats(ctx)
	if err != nil {
		return err
	}
	// Chat platforms sign their requests; they bypass the console's login.
	mux := http.NewServeMux()
	mux.Handle("/", handler)
	for _, c := range chats {
		c.Routes(mux)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", *addr, err)
	}
	if m.OnListen != nil {
		m.OnListen(ln.Addr().String())
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      admission.DefaultMaxWait + api.AskTimeout + 10*time.Second, // queued, then answered
		IdleTimeout:       2 * time.Minute,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	m.Log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("public_url", m.Config.Server.PublicURL))

	// Syncs run under their own context, cancelled after HTTP has drained.
	syncCtx, cancelSyncs := context.WithCancel(context.WithoutCancel(ctx))
	var syncs sync.WaitGroup
	syncs.Go(func() { m.prune(syncCtx, retention, pruneEvery) })
	syncs.Go(func() { memtrim.New(server.LastAsk).Run(syncCtx) })
	syncs.Go(func() {
		if m.initialSync(syncCtx) {
			ready.MarkLoaded()
		}
		if err := sched.Start(syncCtx); err != nil {
			m.Log.Error("start scheduler", slog.Any("error", err))
			return
		}
		sched.Wait()
	})

	// Chat adapters receive events under their own context: cancelled
	// first at shutdown, so that no new question is taken.
	chatCtx, stopChats := context.WithCancel(context.WithoutCancel(ctx))
	defer stopChats()
	chatErr := make(chan error, len(chats))
	var running sync.WaitGroup
	for _, c := range chats {
		running.Go(func() {
			if err := c.Run(chatCtx); err != nil {
				chatErr <- err
			}
		})
	}

	select {
	case err = <-serveErr:
		err = fmt.Errorf("serve: http: %w", err)
	case err = <-chatErr:
	case <-ctx.Done():
		m.Log.Info("shutting down")
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), m.Config.Server.ShutdownTimeout)
	defer stop()
	// In order: stop taking chat events, stop taking requests, finish the
	// answers in flight, then syncs.
	stopChats()
	running.Wait()
	if serr := srv.Shutdown(shutdownCtx); serr != nil {
		m.Log.Warn("in-flight requests did not finish in time; closing", slog.Any("error", serr))
		_ = srv.Close()
	}
	for _, c := range chats {
		if cerr := c.Shutdown(shutdownCtx); cerr != nil {
			m.Log.Warn("chat answers in flight did not finish in time", slog.Any("error", cerr))
		}
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
		// The corpus pass a sync ends with, once for an index this
		// process did not sync: the answerer's statistics and the stale
		// report's conflicts are ready before the first question.
		if err := m.Engine.Pass(ctx); err != nil {
			m.Log.Error("corpus pass", slog.Any("error", err))
		}
		m.Log.Info("index loaded", slog.Int("chunks", n))
		return true
	}
	m.Log.Info("index is empty: syncing all sources")
	// The engine logs each run, and each source that failed with the reason.
	_, _ = m.SyncSources(ctx, m.Sources, nil)
	n, cerr := m.Index.Count(ctx)
	if cerr != nil || n == 0 {
		m.Log.Warn("index is still empty: not ready until a sync succeeds")
		return false
	}
	return true
}

// seedTurnMetrics starts docent_turns_total at the turns the store holds,
// so that it goes on across restarts (turns pruned by retention are not
// taken off it: a counter only grows).
func (m *Main) seedTurnMetrics(ctx context.Context) {
	counts, err := m.Store.CountTurnsByPlatform(ctx)
	if err != nil {
		m.Log.Warn("docent_turns_total starts at 0: the stored turns could not be counted", slog.Any("error", err))
		return
	}
	for _, c := range counts {
		m.Metrics.SeedTurns(c.Platform, c.Status, c.N)
	}
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
