package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/connectors"
)

// Serve syncs when the index is empty, then serves HTTP until ctx ends,
// running scheduled syncs meanwhile. It shuts down gracefully.
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
	if *addr == "" {
		*addr = m.Config.Server.Addr
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	if m.OnListen != nil {
		m.OnListen(ln.Addr().String())
	}

	var docs *api.Docs
	if len(m.LocalDocs) > 0 {
		docs = api.NewDocs(m.LocalDocs)
	}
	server := api.New(m.Recorder, answer.Format, m.Metrics.Registry, docs, m.Log)
	srv := &http.Server{Handler: server.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	m.Log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("public_url", m.Config.Server.PublicURL))

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	initial := make(chan struct{})
	go func() {
		defer close(initial)
		m.initialSync(runCtx)
		server.SetReady(true)
	}()
	sched := connectors.NewScheduler(m.syncer(), m.Log, connectors.SchedulerOptions{Workers: m.Config.Sync.Workers})
	for _, sc := range m.Config.Sources {
		spec := sc.Schedule
		if spec == "" {
			spec = m.Config.Sync.Schedule
		}
		if spec == "" || spec == "off" {
			continue
		}
		src, err := m.source(sc.Name)
		if err != nil {
			return err
		}
		if err := sched.Add(src, spec); err != nil {
			return fmt.Errorf("schedule source %s: %w", sc.Name, err)
		}
	}
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		<-initial
		if err := sched.Start(runCtx); err != nil {
			m.Log.Error("start scheduler", slog.Any("error", err))
			return
		}
		sched.Wait()
	}()

	select {
	case err := <-serveErr:
		cancel()
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	m.Log.Info("shutting down")
	shutdownCtx, stop := context.WithTimeout(context.Background(), m.Config.Server.ShutdownTimeout)
	defer stop()
	err = srv.Shutdown(shutdownCtx)
	cancel()
	<-initial
	<-schedDone
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// initialSync syncs every source when the index holds nothing yet.
func (m *Main) initialSync(ctx context.Context) {
	n, err := m.Index.Count(ctx)
	if err != nil {
		m.Log.Error("count index", slog.Any("error", err))
		return
	}
	if n > 0 {
		m.Log.Info("index loaded", slog.Int("chunks", n))
		return
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
}
