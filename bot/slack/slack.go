package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/internal/backoff"
)

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// ErrClosed is returned for events that arrive once Shutdown has begun.
var ErrClosed = errors.New("slack: shutting down")

// Options configure a Client.
type Options struct {
	// APIURL is the Web API base (DefaultAPIURL when empty); Socket Mode's
	// websocket URL comes from apps.connections.open there.
	APIURL string
	// BotToken (xoxb-) calls the Web API; AppToken (xapp-) opens Socket
	// Mode connections; SigningSecret verifies HTTP requests.
	BotToken, AppToken, SigningSecret string
	// EscalationChannel receives handoff requests; empty posts them in
	// the asker's thread.
	EscalationChannel string
	// UserGroup is the user group ID a handoff mentions.
	UserGroup string
	// Reaction is the emoji put on a question while it is answered
	// ("" or "off" for none).
	Reaction string
	// AssistantStatus is shown in an assistant thread while answering.
	AssistantStatus string
	// PromptsTitle and Prompts are suggested when an assistant thread
	// starts.
	PromptsTitle string
	Prompts      []Prompt
	// MaxRetries is how many times a call that failed transiently is
	// retried: a 429 after its Retry-After (at least a second), a 5xx or a
	// network error after a backoff; 0 means 3.
	MaxRetries int
	// Workers and Backlog bound the events handled at once and waiting
	// (bot.NewIntake's defaults when 0): a burst of events holds a bounded
	// number of goroutines, and answers queue in the shared admission
	// control, not here.
	Workers, Backlog int
	// Clock waits between retries; the wall clock when nil (tests pass a
	// fake one).
	Clock backoff.Clock
	// Logger receives the adapter's logs (nil discards them).
	Logger *slog.Logger
}

// Prompt is a suggested prompt of an assistant thread.
type Prompt struct {
	// Title is what the button shows; Message what it sends.
	Title, Message string
}

// Client is the Slack adapter: it turns Slack events and button presses
// into the bot core's Messages and Actions, and posts what the core asks
// for. It receives events over Socket Mode (RunSocketMode) or HTTP
// (Handler). It is safe for concurrent use.
type Client struct {
	api  *slackapi.Client
	core *bot.Bot
	opts Options
	log  *slog.Logger

	// Set by Start from auth.test: the bot's user ID and its team.
	botUser, team string

	// Events are handled on the intake's bounded pool of workers; once
	// closing, new events are refused.
	intake *bot.Intake
}

// NewClient returns an adapter that hands events to core. Call Start
// before receiving events.
func NewClient(core *bot.Bot, opts Options) *Client {
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(opts.APIURL, "/") {
		opts.APIURL += "/"
	}
	if opts.Reaction == "off" {
		opts.Reaction = ""
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 3
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	apiOpts := []slackapi.Option{slackapi.OptionAPIURL(opts.APIURL)}
	if opts.AppToken != "" {
		apiOpts = append(apiOpts, slackapi.OptionAppLevelToken(opts.AppToken))
	}
	return &Client{api: slackapi.New(opts.BotToken, apiOpts...), core: core, opts: opts,
		log: log.With(slog.String("platform", "slack")), intake: bot.NewIntake(opts.Workers, opts.Backlog)}
}

// Start checks the bot token (auth.test) and learns the bot's user ID,
// which tells mentions of the bot and its own messages apart.
func (c *Client) Start(ctx context.Context) error {
	var res *slackapi.AuthTestResponse
	err := c.call(ctx, "auth.test", func(ctx context.Context) (err error) {
		res, err = c.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		return err
	}
	c.botUser, c.team = res.UserID, res.TeamID
	c.log.InfoContext(ctx, "slack connected", slog.String("team", res.Team), slog.String("bot_user", res.UserID))
	return nil
}

// BotUserID is the bot's user ID, known after Start.
func (c *Client) BotUserID() string { return c.botUser }

// goWork queues fn on the intake; it reports false (and runs nothing)
// once Shutdown has begun or when the backlog is full.
func (c *Client) goWork(fn func(ctx context.Context)) bool {
	if !c.intake.Go(fn) {
		c.log.Warn("slack: event not taken: shutting down, or the backlog is full")
		return false
	}
	return true
}

// Shutdown stops taking events, waits for the events taken to be
// handled, then for the core's answers in flight to be posted (see
// bot.Bot.Shutdown). When ctx ends first, their work is cancelled and
// Shutdown returns ctx's error after they stop. Stop the event source
// first (cancel RunSocketMode's context, shut down the HTTP server).
func (c *Client) Shutdown(ctx context.Context) error {
	err := c.intake.Close(ctx)
	if cerr := c.core.Shutdown(ctx); cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("slack: answers in flight cancelled: %w", err)
	}
	return nil
}

// call runs one Web API call with the one retry policy of docent's
// clients (internal/backoff): a *slackapi.RateLimitedError waits its
// Retry-After (at least a second), a 5xx or a network error backs off
// from a second, up to MaxRetries times. Errors are prefixed "slack:
// METHOD:".
func (c *Client) call(ctx context.Context, method string, fn func(ctx context.Context) error) error {
	r := backoff.Retrier{
		Policy:   backoff.Policy{Base: time.Second, Max: 30 * time.Second},
		Attempts: c.opts.MaxRetries + 1,
		Clock:    c.opts.Clock,
		OnRetry: func(_ int, wait time.Duration, f backoff.Failure, err error) {
			msg := "slack call failed; retrying"
			if f.RateLimited {
				msg = "rate limited; waiting"
			}
			c.log.WarnContext(ctx, msg, slog.String("method", method), slog.Duration("retry_after", wait), slog.Any("error", err))
		},
	}
	err := r.Do(ctx, fn, classify)
	var be *backoff.Error
	if errors.As(err, &be) {
		if ctx.Err() != nil {
			return fmt.Errorf("slack: %s: %w", method, errors.Join(be.Err, ctx.Err()))
		}
		err = be.Err
	}
	if err != nil {
		return fmt.Errorf("slack: %s: %w", method, err)
	}
	return nil
}

// classify reads a failed Web API call: a rate limit (429) waits its
// Retry-After, at least a second; a server error (backoff.TransientStatus)
// or a network error (backoff.Transient) is retried; every other error
// ({"ok": false}, 4xx) is final.
func classify(err error) backoff.Failure {
	if rl, ok := errors.AsType[*slackapi.RateLimitedError](err); ok {
		return backoff.Failure{Transient: true, RateLimited: true, After: max(rl.RetryAfter, time.Second)}
	}
	if sc, ok := errors.AsType[slackapi.StatusCodeError](err); ok {
		return backoff.Failure{Transient: backoff.TransientStatus(sc.Code)}
	}
	return backoff.Failure{Transient: backoff.Transient(err)}
}
