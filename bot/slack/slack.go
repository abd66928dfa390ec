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
	// MaxRetries is how many times a rate-limited call (429) is retried
	// after Retry-After; 0 means 3.
	MaxRetries int
	// Workers and Backlog bound the events handled at once and waiting
	// (bot.NewIntake's defaults when 0): a burst of events holds a bounded
	// number of goroutines, and answers queue in the shared admission
	// control, not here.
	Workers, Backlog int
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

// call runs one Web API call, waiting out 429s: on a
// *slackapi.RateLimitedError it sleeps Retry-After (at least a second)
// and tries again, up to MaxRetries times. Errors are prefixed
// "slack: METHOD:".
func (c *Client) call(ctx context.Context, method string, fn func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		rl, ok := errors.AsType[*slackapi.RateLimitedError](err)
		if !ok || attempt >= c.opts.MaxRetries {
			return fmt.Errorf("slack: %s: %w", method, err)
		}
		wait := max(rl.RetryAfter, time.Second)
		c.log.WarnContext(ctx, "rate limited; waiting", slog.String("method", method), slog.Duration("retry_after", wait))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("slack: %s: %w", method, errors.Join(err, ctx.Err()))
		}
	}
}
