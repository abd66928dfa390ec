// Package console is docent's admin web console: server-rendered pages
// (templates/) on the standard mux, where admins read every retrieval,
// work the misses inbox, keep the golden set and run it, fix stale
// documents, watch syncs and try questions in a playground. It also
// guards the JSON API with bearer tokens made here (APIGuard).
//
// Handlers follow one pattern: one file per action, methods on the one
// handler type, every route listed in routes(). A handler loads what it
// shows from the store, sends any error to serverError (which logs it
// and shows "Internal error"), then renders a templ component.
//
// Security: every page but /login and /static/ needs a session (a
// password login, a trusted SSO header from a trusted proxy, or auth:
// none); session cookies are HttpOnly, SameSite=Lax and Secure over TLS,
// and expire when idle; every POST carries the session's CSRF token;
// sign-in attempts are counted before the password check and throttled,
// a few checked at once; responses carry a CSP without inline script and
// frame-ancestors 'none'. GuardDocs puts /docs behind the API's rule,
// with signed links (DocLinks) for the citations of chat answers.
package console

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/stale"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// Asker answers a question and stores the turn; answer.Recorder implements it.
type Asker interface {
	Ask(ctx context.Context, q docent.Question) (docent.Turn, error)
}

// Admission admits a playground question before any work is done on it:
// the admission control every entrance shares (admission.Controller).
type Admission interface {
	// Acquire waits for a slot for a question from channel (the admin)
	// on platform ("console") and returns the function that frees it; an
	// error when the question is refused (too busy) or ctx ended.
	Acquire(ctx context.Context, platform, channel string) (release func(), err error)
}

// Scheduler runs syncs; connectors.Scheduler implements it.
type Scheduler interface {
	// Status returns every scheduled source's state.
	Status() []connectors.JobStatus
	// RunNow queues a sync of the source; connectors.ErrSyncBusy when it
	// is queued or running, connectors.ErrUnknownSource when it is not
	// scheduled.
	RunNow(source string) error
}

// Searcher is what "why not this document?" re-runs a turn's query on:
// the index's two retrievers and the query embedder.
type Searcher interface {
	KeywordSearch(ctx context.Context, q search.KeywordQuery) ([]docent.Hit, error)
	VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error)
	Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error)
	Count(ctx context.Context) (int, error)
}

// Embedder embeds a query; search.Embedder implements it.
type Embedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Source is a configured source as the console shows it.
type Source struct {
	Name, Type, Schedule string
	// StaleAfterDays is its stale policy.
	StaleAfterDays int
}

// Admin is a user who may sign in with a password.
type Admin struct {
	// User is the login name; Hash the bcrypt hash of the password.
	User, Hash string
}

// AuthOptions say who may use the console.
type AuthOptions struct {
	// Open (auth: none) lets anyone in, as "admin".
	Open bool
	// Admins may sign in with a password.
	Admins []Admin
	// TrustedHeader names a header an SSO proxy sets to the signed-in
	// email; Allowed lists the emails let in that way. The header counts
	// only on requests whose peer address is in TrustedProxies (none:
	// the header is ignored).
	TrustedHeader  string
	Allowed        []string
	TrustedProxies []netip.Prefix
	// SessionIdle ends a session unused this long; default 2h.
	SessionIdle time.Duration
	// SecureCookies marks cookies Secure even without TLS on this hop
	// (the public URL is https behind a proxy).
	SecureCookies bool
	// Demo notes on the login page that the password was printed at start.
	Demo bool
}

// Options wire the console. Store, Asker, Answerer, Index and Embedder
// are required; the rest may be zero.
type Options struct {
	Store *store.DB
	// Asker answers playground questions (stored as turns).
	Asker Asker
	// Ready reports whether the index can answer (serve's readiness);
	// until then the playground asks nothing and stores no turn. Nil
	// means always ready.
	Ready func() bool
	// Admission admits playground questions; nil admits every one.
	Admission Admission
	// Answerer runs the golden set through the pipeline (not stored as turns).
	Answerer eval.Answerer
	Index    Searcher
	Embedder Embedder
	// Scheduler is the sync scheduler ("sync now", next runs); may be nil.
	Scheduler Scheduler
	// Stale is the stale-documents checker (shared with the chat bots).
	Stale *stale.Checker
	// Sources are the configured sources, in order.
	Sources []Source
	// Forums are the chat forums whose posts the overview follows
	// (Discord forums configured with tags); a forum with a recorded
	// resolution is shown too.
	Forums []store.ForumRef
	// Channels are the scopes the playground can ask from; the console
	// adds "every source" and one per source.
	Channels []templates.PlaygroundChannel
	// Auth configures sign-in.
	Auth AuthOptions
	// APITokensRequired and DefaultRate describe the API guard, for the
	// tokens page.
	APITokensRequired bool
	DefaultRate       int
	// Config returns the configuration, secrets redacted, that golden
	// runs are stored with.
	Config func() string
	// Tuner tunes the offline answerer (synonyms from misses, calibration
	// on the golden set); nil, for a model answerer, hides those controls.
	Tuner Tuner
	// Log receives errors; nil discards.
	Log *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Tuner tunes the offline answerer from the console.
type Tuner interface {
	// AddSynonym adds a synonym entry in the synonyms file's format
	// ("wfh => remote work") for questions asked from now on, and keeps
	// it. It fails for an entry that does not parse.
	AddSynonym(ctx context.Context, entry, by string) error
	// Calibrate fits the passage model and the decision rule on g,
	// without changing what answers live questions.
	Calibrate(ctx context.Context, g *eval.Golden) (eval.Fit, error)
	// Apply puts a fit in force for questions asked from now on, and
	// keeps it across restarts (unless the config sets its own).
	Apply(ctx context.Context, f eval.Fit, by string) error
}

// Console is the admin console. Close it to stop golden runs in progress.
type Console struct {
	h *handler
}

// New builds the console.
func New(opts Options) (*Console, error) {
	if opts.Store == nil || opts.Asker == nil || opts.Answerer == nil || opts.Index == nil || opts.Embedder == nil {
		return nil, errors.New("console: store, asker, answerer, index and embedder are required")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Config == nil {
		opts.Config = func() string { return "" }
	}
	if opts.DefaultRate <= 0 {
		opts.DefaultRate = 60
	}
	if opts.Stale == nil {
		opts.Stale = stale.New(opts.Store, stale.Options{Now: opts.Now, Log: opts.Log})
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &handler{
		opts:   opts,
		store:  opts.Store,
		log:    opts.Log,
		now:    opts.Now,
		auth:   newAuth(opts.Auth, opts.Now),
		runCtx: ctx,
		cancel: cancel,
	}
	return &Console{h: h}, nil
}

// Handler returns the console's routes, with other requests passed to
// next (the JSON API, health, metrics, docs). Every response gets the
// security headers.
func (c *Console) Handler(next http.Handler) http.Handler {
	return securityHeaders(c.h.routes(next))
}

// AbandonRuns marks golden runs a previous process left running as
// failed; call it once at start.
func (c *Console) AbandonRuns(ctx context.Context) error {
	n, err := c.h.store.AbandonGoldenRuns(ctx)
	if n > 0 {
		c.h.log.Warn("golden runs abandoned by a previous process marked failed", slog.Int64("runs", n))
	}
	return err
}

// Close stops a golden run in progress (it is recorded as failed) and
// waits for it.
func (c *Console) Close() error {
	c.h.cancel()
	c.h.runs.Wait()
	return nil
}

// handler holds what every console handler needs.
type handler struct {
	opts  Options
	store *store.DB
	log   *slog.Logger
	now   func() time.Time
	auth  *auth

	runCtx context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup
	runMu  sync.Mutex
	runID  int64 // the golden run in progress, 0 when none
}
