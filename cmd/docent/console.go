package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/console"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/examples/handbook"
)

// webAccess is what serve decided about who may use the console and the API.
type webAccess struct {
	// open: auth: none.
	open bool
	// demo: localhost with no admin configured; admins holds the
	// one-time admin.
	demo   bool
	admins []console.Admin
	// tokensRequired: every /api/ request and every /docs page needs a
	// bearer token (or a console session, or a signed link).
	tokensRequired bool
	// proxies are the peers the trusted header is taken from (none: the
	// header is ignored).
	proxies []netip.Prefix
}

// decideAccess applies the rules: on localhost with no admin configured,
// a one-time admin (password printed once, to stdout) and an open API;
// beyond localhost, a configured admin (or trusted header) and API
// tokens, unless auth.mode is none.
// consoleTuner is the console's Tuner: the offline answerer's, nil for
// a model answerer.
func (m *Main) consoleTuner() console.Tuner {
	if m.OfflineGate == nil {
		return nil
	}
	return tuner{m}
}

func (m *Main) decideAccess(addr string) (webAccess, error) {
	a := m.Config.Auth
	acc := webAccess{open: a.Mode == config.AuthNone}
	for _, ad := range a.Admins {
		acc.admins = append(acc.admins, console.Admin{User: ad.User, Hash: ad.PasswordHash})
	}
	local := isLoopback(addr)
	acc.tokensRequired = a.APITokens == config.TokensRequired || (!local && !acc.open)
	proxies, err := a.TrustedHeader.Prefixes()
	if err != nil {
		return acc, fmt.Errorf("serve: auth.trusted_header: %w", err)
	}
	acc.proxies = proxies
	header := a.TrustedHeader.Header != ""
	if header && len(proxies) == 0 && !local && !acc.open {
		return acc, fmt.Errorf("serve: %s is reachable beyond this machine, so auth.trusted_header needs "+
			"auth.trusted_header.proxies: the addresses or CIDRs of the proxies that set %s (from anyone else it would sign them in)",
			addr, a.TrustedHeader.Header)
	}
	if acc.open || len(acc.admins) > 0 || (header && len(proxies) > 0) {
		// A one-time password an earlier demo left behind is void.
		_ = os.Remove(filepath.Join(m.Config.DataDir, oneTimePasswordFile))
		return acc, nil
	}
	if !local {
		return acc, fmt.Errorf("serve: %s is reachable beyond this machine, so the console needs an admin: "+
			"add auth.admins (a password_hash from `docent admin hash-password`) or auth.trusted_header, "+
			"or set auth.mode: none to serve the console and the API open", addr)
	}
	password := randomPassword()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return acc, fmt.Errorf("serve: one-time admin: %w", err)
	}
	acc.demo = true
	acc.admins = []console.Admin{{User: "admin", Hash: string(hash)}}
	return acc, m.tellPassword(password)
}

// oneTimePasswordFile is where the one-time password goes when stdout
// is not a terminal.
const oneTimePasswordFile = "console-password"

// tellPassword gives the one-time password to the person who started
// docent, never to a log: printed when stdout is a terminal, else
// written to a file in the data dir readable by this user only (0600),
// whose path is logged. The file is removed when docent stops.
func (m *Main) tellPassword(password string) error {
	if f, ok := m.Stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(m.Stdout, "Console: sign in as admin with the one-time password %s (valid until docent stops; "+
			"configure auth.admins to keep one)\n", password)
		return nil
	}
	p, err := filepath.Abs(filepath.Join(m.Config.DataDir, oneTimePasswordFile))
	if err != nil {
		return fmt.Errorf("serve: one-time admin: %w", err)
	}
	if err := writePrivate(p, []byte(password+"\n")); err != nil {
		return fmt.Errorf("serve: one-time admin: %w", err)
	}
	m.closers = append(m.closers, closerFunc(func() error {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}))
	m.Log.Info("console: sign in as admin with the one-time password in "+p+" (readable by this user only; "+
		"valid until docent stops; configure auth.admins to keep one)", slog.String("password_file", p))
	return nil
}

// closerFunc is a func as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// randomPassword is 20 random letters and digits (about 100 bits).
func randomPassword() string {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// sayAccess tells at start who may reach what.
func (m *Main) sayAccess(addr string, acc webAccess) {
	switch {
	case acc.open:
		m.Log.Warn("auth: none: the console and /api/ are open to anyone who can reach "+addr, slog.String("addr", addr))
	case acc.demo:
		m.Log.Info("localhost, no admin configured: /api/ is open without a token; the console has a one-time admin (see its password above)")
	case acc.tokensRequired:
		m.Log.Info("console sign-in required; /api/ requires a bearer token made in the console", slog.Int("admins", len(acc.admins)),
			slog.Bool("trusted_header", m.Config.Auth.TrustedHeader.Header != ""))
	default:
		m.Log.Info("console sign-in required; /api/ is open on localhost (a token that is sent is checked)")
	}
	if th := m.Config.Auth.TrustedHeader; th.Header != "" && !acc.open {
		if len(acc.proxies) == 0 {
			m.Log.Warn("auth.trusted_header is set without auth.trusted_header.proxies: the "+th.Header+
				" header is ignored; list the proxies it may come from", slog.String("header", th.Header))
		} else {
			m.Log.Info("trusted header accepted from the listed proxies only", slog.String("header", th.Header),
				slog.Int("proxies", len(acc.proxies)))
		}
	}
}

// isLoopback reports whether a listen address binds this machine only.
func isLoopback(addr string) bool { return config.Loopback(addr) }

// webHandler wires the console around the API handler: /api/ behind the
// token guard, /metrics on its own address when server.metrics_addr is
// set, everything else the console's or the API's.
func (m *Main) webHandler(ctx context.Context, addr string, api http.Handler, sched console.Scheduler) (http.Handler, *console.Console, error) {
	acc, err := m.decideAccess(addr)
	if err != nil {
		return nil, nil, err
	}
	m.sayAccess(addr, acc)
	var sources []console.Source
	for _, sc := range m.Config.Sources {
		spec := sc.Schedule
		if spec == "" {
			spec = m.Config.Sync.Schedule
		}
		sources = append(sources, console.Source{Name: sc.Name, Type: sc.Type, Schedule: spec, StaleAfterDays: m.Config.StaleAfterDays(sc.Name)})
	}
	th := m.Config.Auth.TrustedHeader
	secure := strings.HasPrefix(strings.ToLower(m.Config.Server.PublicURL), "https://")
	c, err := console.New(console.Options{
		Store: m.Store, Asker: m.Recorder, Ready: m.ready, Admission: m.consoleAdmission(), Answerer: m.Pipeline, Index: m.Index, Embedder: m.Embedder,
		Scheduler: sched, Stale: m.Stale, Sources: sources, Forums: discordForums(m.Config.Discord),
		Auth: console.AuthOptions{Open: acc.open, Admins: acc.admins, TrustedHeader: th.Header, Allowed: th.Allowed, TrustedProxies: acc.proxies,
			SessionIdle: m.Config.Auth.SessionIdle, SecureCookies: secure, Demo: acc.demo},
		APITokensRequired: acc.tokensRequired, DefaultRate: m.Config.Auth.APIRatePerMinute,
		Config: m.Config.Redacted, Tuner: m.consoleTuner(), Log: m.Log,
	})
	if err != nil {
		return nil, nil, err
	}
	if err := c.AbandonRuns(ctx); err != nil {
		return nil, nil, err
	}
	if err := m.seedGolden(ctx); err != nil {
		m.Log.Warn("golden set not seeded from the handbook", slog.Any("error", err))
	}
	guard := console.NewAPIGuard(m.Store, acc.tokensRequired, m.Config.Auth.APIRatePerMinute, m.Log)
	if acc.tokensRequired {
		// /docs needs a token too; chat answers carry signed links.
		key, err := docLinkKey(m.Config.DataDir)
		if err != nil {
			return nil, nil, err
		}
		if m.docLinks, err = console.NewDocLinks(key, m.Config.Server.PublicURL, m.Config.Auth.DocLinkTTL, nil); err != nil {
			return nil, nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", guard.Wrap(api))
	mux.Handle("/docs/", c.GuardDocs(guard, m.docLinks, api))
	if err := m.routeMCP(mux, guard); err != nil {
		return nil, nil, err
	}
	if m.Config.Server.MetricsAddr != "" {
		mux.Handle("/metrics", http.NotFoundHandler())
	}
	mux.Handle("/", api)
	return c.Handler(mux), c, nil
}

// serveMetrics serves /metrics alone on server.metrics_addr until ctx ends.
func (m *Main) serveMetrics(ctx context.Context) (func(), error) {
	addr := m.Config.Server.MetricsAddr
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Metrics.Registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Log.Error("metrics server", slog.Any("error", err))
		}
	}()
	m.Log.Info("serving metrics", slog.String("addr", ln.Addr().String()))
	if m.OnMetricsListen != nil {
		m.OnMetricsListen(ln.Addr().String())
	}
	return func() { _ = srv.Shutdown(context.WithoutCancel(ctx)) }, nil
}

// seedGolden imports the bundled handbook's golden set as the demo's
// initial set, once: when a handbook source is configured and the set
// has never held a question or been run.
func (m *Main) seedGolden(ctx context.Context) error {
	bundled := false
	for _, sc := range m.Config.Sources {
		bundled = bundled || sc.Type == config.SourceBundled
	}
	if !bundled {
		return nil
	}
	qs, err := m.Store.ListGolden(ctx)
	if err != nil || len(qs) > 0 {
		return err
	}
	runs, err := m.Store.ListGoldenRuns(ctx, 1)
	if err != nil || len(runs) > 0 {
		return err
	}
	g, err := eval.ParseGolden("examples/handbook/golden.yaml", handbook.Golden)
	if err != nil {
		return err
	}
	return console.ImportGolden(ctx, m.Store, g, true)
}
