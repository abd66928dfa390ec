package console

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/store"
)

// APIGuard checks bearer tokens on the JSON API (/api/...). A token that
// is sent must be one the console made and not revoked (401 otherwise),
// and within its requests per minute (429 with Retry-After otherwise).
// With Required, a request without a token is refused too; without it
// (the demo on localhost) it passes.
type APIGuard struct {
	store    *store.DB
	required bool
	rate     int
	log      *slog.Logger
	now      func() time.Time

	mu       sync.Mutex
	limiters map[int64]*rate.Limiter
	touched  map[int64]time.Time
}

// NewAPIGuard returns a guard over the tokens in st; defaultRate is the
// requests per minute of a token that sets none.
func NewAPIGuard(st *store.DB, required bool, defaultRate int, log *slog.Logger) *APIGuard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &APIGuard{store: st, required: required, rate: max(defaultRate, 1), log: log, now: time.Now,
		limiters: map[int64]*rate.Limiter{}, touched: map[int64]time.Time{}}
}

// Required reports whether every API request needs a token.
func (g *APIGuard) Required() bool { return g.required }

// Wrap guards next: the token is checked and charged one request of its
// rate, and the request carries the token as its docent.Caller (its name
// and scope), which the API applies.
func (g *APIGuard) Wrap(next http.Handler) http.Handler { return g.wrap(next, true) }

// Authenticate guards next like Wrap but leaves the rate to next: MCP
// charges each tool call (Allow), not each protocol message.
func (g *APIGuard) Authenticate(next http.Handler) http.Handler { return g.wrap(next, false) }

func (g *APIGuard) wrap(next http.Handler, charge bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		if authz == "" {
			if g.required {
				unauthorized(w, "token_required", "This API needs a bearer token: Authorization: Bearer TOKEN (make one in the console under API tokens).")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		scheme, token, ok := strings.Cut(authz, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			unauthorized(w, "invalid_token", "The Authorization header must be: Bearer TOKEN.")
			return
		}
		t, err := g.store.APITokenByHash(r.Context(), hashKey(strings.TrimSpace(token)))
		switch {
		case errors.Is(err, store.ErrNotFound):
			unauthorized(w, "invalid_token", "The token is not valid.")
			return
		case err != nil:
			g.log.ErrorContext(r.Context(), "console: api token lookup", slog.Any("error", err))
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal", "message": "Internal error."})
			return
		case t.Revoked():
			unauthorized(w, "invalid_token", "The token was revoked.")
			return
		}
		c := docent.Caller{Name: t.Name, TokenID: t.ID, RatePerMinute: t.RatePerMinute, Scope: t.Scope}
		if charge {
			if wait, ok := g.Allow(c); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate_limited",
					"message": "This token made more than " + strconv.Itoa(g.perMinute(c)) + " requests in a minute."})
				return
			}
		}
		g.touch(r, t.ID)
		next.ServeHTTP(w, r.WithContext(docent.NewContextWithCaller(r.Context(), c)))
	})
}

// Allow charges the caller's token one request: a minute's worth of
// burst, refilled evenly. When the bucket is empty it returns false and
// how long until the next request would be let through. /api/ and /mcp
// draw on the same bucket of a token.
func (g *APIGuard) Allow(c docent.Caller) (time.Duration, bool) {
	return g.allow(c.TokenID, g.perMinute(c))
}

// perMinute is the caller's rate: its token's, else the default.
func (g *APIGuard) perMinute(c docent.Caller) int {
	if c.RatePerMinute > 0 {
		return c.RatePerMinute
	}
	return g.rate
}

// allow takes one request from the token's bucket (a minute's worth of
// burst, refilled evenly); when empty it returns how long until the next.
func (g *APIGuard) allow(id int64, perMin int) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.limiters[id]
	lim := rate.Limit(float64(perMin) / 60)
	if l == nil || l.Limit() != lim {
		l = rate.NewLimiter(lim, perMin)
		g.limiters[id] = l
	}
	now := g.now()
	res := l.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// touch records the token's use, at most once a minute.
func (g *APIGuard) touch(r *http.Request, id int64) {
	now := g.now()
	g.mu.Lock()
	if now.Sub(g.touched[id]) < time.Minute {
		g.mu.Unlock()
		return
	}
	g.touched[id] = now
	g.mu.Unlock()
	if err := g.store.TouchAPIToken(r.Context(), id, now); err != nil {
		g.log.WarnContext(r.Context(), "console: record api token use", slog.Any("error", err))
	}
}

func unauthorized(w http.ResponseWriter, code, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="docent"`)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
