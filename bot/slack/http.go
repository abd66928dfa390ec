package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// Paths of the HTTP endpoints: the Events API Request URL and the
// Interactivity Request URL, under the server's public URL.
const (
	EventsPath       = "/slack/events"
	InteractionsPath = "/slack/interactions"
)

// maxBody bounds a request body; Slack's are a few kilobytes.
const maxBody = 1 << 20

// Handler serves the Events API and interactivity over HTTP. Every
// request is verified before anything in it is read as JSON or a form:
// the v0 signature over the body with the signing secret, and a
// timestamp within five minutes (401 otherwise). url_verification is
// answered with its challenge; events and button presses are
// acknowledged at once (Slack waits 3 seconds) and carried out on their
// own goroutines.
func (c *Client) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+EventsPath, c.serveEvents)
	mux.HandleFunc("POST "+InteractionsPath, c.serveInteractions)
	return mux
}

// verified reads r's body and checks Slack's signature on it; on failure
// it answers 401 and returns false.
func (c *Client) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err := c.verify(r.Header, body); err != nil {
		c.log.WarnContext(r.Context(), "refused an unverified request", slog.String("path", r.URL.Path),
			slog.String("remote", r.RemoteAddr), slog.String("reason", err.Error()))
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// verify checks the X-Slack-Signature and X-Slack-Request-Timestamp
// headers against body.
func (c *Client) verify(h http.Header, body []byte) error {
	if c.opts.SigningSecret == "" {
		return errors.New("no signing secret configured")
	}
	sv, err := slackapi.NewSecretsVerifier(h, c.opts.SigningSecret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	return sv.Ensure()
}

func (c *Client) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := c.verified(w, r)
	if !ok {
		return
	}
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		var outer struct{ Type string }
		if json.Unmarshal(body, &outer) == nil && outer.Type == slackevents.CallbackEvent {
			// An event of a type this adapter does not know: acknowledged,
			// so that Slack does not redeliver it.
			c.log.DebugContext(r.Context(), "event ignored", slog.Any("error", err))
			w.WriteHeader(http.StatusOK)
			return
		}
		c.log.WarnContext(r.Context(), "unreadable event", slog.Any("error", err))
		http.Error(w, "unreadable event", http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		v, _ := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if v == nil {
			http.Error(w, "unreadable challenge", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(slackevents.ChallengeResponse{Challenge: v.Challenge})
	case slackevents.CallbackEvent:
		if retry := r.Header.Get("X-Slack-Retry-Num"); retry != "" {
			c.log.DebugContext(r.Context(), "event redelivered", slog.String("retry", retry),
				slog.String("reason", r.Header.Get("X-Slack-Retry-Reason")))
		}
		if !c.goWork(func(ctx context.Context) { c.handleEvent(ctx, ev) }) {
			http.Error(w, ErrClosed.Error(), http.StatusServiceUnavailable) // Slack retries it later
			return
		}
		w.WriteHeader(http.StatusOK)
	case slackevents.AppRateLimited:
		c.log.WarnContext(r.Context(), "Slack is dropping this app's events: more than 30,000 in an hour")
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

func (c *Client) serveInteractions(w http.ResponseWriter, r *http.Request) {
	body, ok := c.verified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "no payload", http.StatusBadRequest)
		return
	}
	var cb slackapi.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		c.log.WarnContext(r.Context(), "unreadable interaction", slog.Any("error", err))
		http.Error(w, "unreadable payload", http.StatusBadRequest)
		return
	}
	if !c.goWork(func(ctx context.Context) { c.handleInteraction(ctx, cb) }) {
		http.Error(w, ErrClosed.Error(), http.StatusServiceUnavailable)
		return
	}
	// An empty 200 acknowledges a button and closes a submitted modal.
	w.WriteHeader(http.StatusOK)
}
