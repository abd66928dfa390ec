package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// Platform is the platform of every turn asked through MCP.
const Platform = "mcp"

// Asker answers a question and stores the turn; answer.Recorder
// implements it.
type Asker interface {
	// Ask returns the stored turn. It returns an error wrapping
	// docent.ErrEmptyQuestion for a blank question; a failed answer is
	// returned as a turn with its error.
	Ask(ctx context.Context, q docent.Question) (docent.Turn, error)
}

// Retriever ranks chunks for a query; search.Retriever implements it.
type Retriever interface {
	Retrieve(ctx context.Context, req search.Request) (search.Result, error)
}

// Documents is the document registry; store.DB implements it.
type Documents interface {
	// Document returns a document record, live or deleted; an unknown ID
	// is an error wrapping store.ErrNotFound.
	Document(ctx context.Context, id string) (docent.DocRecord, error)
	// DocumentByURL returns the live document at url (without its
	// #fragment); none is an error wrapping store.ErrNotFound.
	DocumentByURL(ctx context.Context, url string) (docent.DocRecord, error)
	// ListDocuments returns the documents f selects (live ones by
	// default), a page at a time (f.Limit, f.Offset).
	ListDocuments(ctx context.Context, f store.DocFilter) ([]docent.DocRecord, error)
}

// Chunks loads stored chunks by ID; search.Index implements it.
type Chunks interface {
	// Chunks returns the chunks with the given IDs in the order asked;
	// unknown IDs are left out.
	Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error)
}

// Admission admits a question or a search before any work is done on
// it, or refuses it: the admission control every entrance of a server
// shares (admission.Controller), so that /api/ask, chat, the console and
// MCP together never run more than its bound.
type Admission interface {
	// Acquire waits for a slot for a call from channel (the token) on
	// platform ("mcp") and returns the function that frees it. It returns
	// an error when the call is refused (too busy) or ctx ended.
	Acquire(ctx context.Context, platform, channel string) (release func(), err error)
}

// RateLimiter charges a caller's token one request; console.APIGuard
// implements it (a token's bucket is shared with /api/).
type RateLimiter interface {
	// Allow reports whether the caller is within its rate, and when not,
	// how long until it is.
	Allow(c docent.Caller) (retryAfter time.Duration, ok bool)
}

// Options wire a Server. Asker, Retriever, Documents and Chunks are
// required; the rest may be zero.
type Options struct {
	Asker     Asker
	Retriever Retriever
	Documents Documents
	Chunks    Chunks
	// Format renders an answer as text with its source list (answer.Format).
	Format func(docent.Answer) string
	// Admission bounds the questions and searches worked on at once; nil
	// admits everything.
	Admission Admission
	// Rate charges each tool call of a token; nil means no rate.
	Rate RateLimiter
	// OnShed, when set, is told of every ask_docs refused before any
	// work: "not_ready" or "overloaded" (the API's codes), for metrics.
	OnShed func(reason string)
	// Ready reports whether the index can answer (nil: always).
	Ready func() bool
	// Refresh runs before every tool call: `docent mcp` follows the index
	// another process syncs with it. Its error fails the call.
	Refresh func(ctx context.Context) error
	// Sources are the configured source names: a source argument must be
	// one of them (the error names those the caller may read).
	Sources []string
	// PublicURL is the server's public URL; its host is let through the
	// DNS-rebinding check of a server listening on loopback behind a
	// proxy.
	PublicURL string
	// AskTimeout bounds one ask_docs; default 30s.
	AskTimeout time.Duration
	// Version is docent's version, told to clients at initialize.
	Version string
	// Log receives errors; nil discards.
	Log *slog.Logger
}

// Server is docent's MCP server. It is safe for concurrent use.
type Server struct {
	opts   Options
	srv    *sdk.Server
	log    *slog.Logger
	sdkLog *slog.Logger // the SDK's: warnings and errors only
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

// New builds the server and its three tools.
func New(opts Options) (*Server, error) {
	if opts.Asker == nil || opts.Retriever == nil || opts.Documents == nil || opts.Chunks == nil {
		return nil, errors.New("mcp: new: asker, retriever, documents and chunks are required")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Format == nil {
		opts.Format = func(a docent.Answer) string { return a.Text }
	}
	if opts.AskTimeout <= 0 {
		opts.AskTimeout = 30 * time.Second
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, log: opts.Log}
	// The SDK logs every session's start and end at Info: on a stateless
	// server that is every request, so only its warnings are kept.
	sdkLog := slog.New(minLevel{Handler: opts.Log.Handler(), min: slog.LevelWarn})
	s.sdkLog = sdkLog
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "docent", Title: "docent", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLog,
	})
	if err := s.addTools(); err != nil {
		return nil, err
	}
	s.addResources()
	return s, nil
}

// instructions tell a client's model what the server is for.
const instructions = "docent answers questions from this organisation's own documentation (handbooks, runbooks, wikis, " +
	"product docs) with numbered citations. Use ask_docs for a question a person would ask and want answered; " +
	"use search_docs to find passages yourself; use get_document to read a whole page that a passage or " +
	"citation points at. Cite the URLs you were given; if docent says the docs do not cover something, say so."

// Run serves one client over t (sdk.StdioTransport for `docent mcp`)
// until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	if err := s.srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: run: %w", err)
	}
	return nil
}

// Connect starts a session over t and returns at once (in-memory
// transports in tests).
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect: %w", err)
	}
	return ss, nil
}

// Handler serves MCP's streamable HTTP transport (mount it at /mcp).
// Put it behind the token guard: a request that carries a
// docent.Caller (a valid token) is served as that caller, scope and rate
// included; one without is anonymous (the demo on localhost). The server
// is stateless and answers with JSON: every POST is one request and its
// reply, so any replica can take it and no stream outlives it. Requests
// from a browser on another origin are refused, and so are requests that
// reach a loopback listener under a host name that is neither loopback
// nor the public URL's (DNS rebinding).
func (s *Server) Handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     s.sdkLog,
		DisableLocalhostProtection: true, // checked below, with the public URL's host let through
	})
	// The SDK hands a request's token to the tools as its TokenInfo; the
	// guard in front has verified it already.
	withCaller := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		c, ok := docent.CallerFromContext(r.Context())
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: strconv.FormatInt(c.TokenID, 10), Extra: map[string]any{callerExtra: c}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	public := ""
	if u, err := url.Parse(s.opts.PublicURL); err == nil {
		public = u.Hostname()
	}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rebound(r, public) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		if _, ok := docent.CallerFromContext(r.Context()); ok {
			withCaller.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
	return http.NewCrossOriginProtection().Handler(mux)
}

// callerExtra is the TokenInfo.Extra key of the docent.Caller.
const callerExtra = "docent.caller"

// rebound reports a request that reached a loopback listener under a
// host name other than a loopback one or the public URL's.
func rebound(r *http.Request, public string) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return !loopback(host) && !strings.EqualFold(host, public)
}

// loopback reports whether addr (host or host:port) is this machine.
func loopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// callerOf returns the caller of a request: the token a guarded HTTP
// request carried, or none (stdio, the demo on localhost).
func callerOf(extra *sdk.RequestExtra) (docent.Caller, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return docent.Caller{}, false
	}
	c, ok := extra.TokenInfo.Extra[callerExtra].(docent.Caller)
	return c, ok
}
