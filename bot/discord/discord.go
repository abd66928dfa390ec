package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/internal/backoff"
)

// DefaultAPIURL is Discord's REST API base.
const DefaultAPIURL = "https://discord.com/api/v10"

// Intents are the gateway intents the adapter asks for: guilds (channels
// and threads), guild messages, direct messages, reactions (✅ solves a
// forum post), and the privileged
// MESSAGE_CONTENT intent, which must be switched on in the developer
// portal (Bot › Privileged Gateway Intents) or guild messages that do not
// mention the bot arrive without their text.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent | discordgo.IntentsGuildMessageReactions

// Permissions is the permissions integer the bot needs in its invite
// URL: view channels, send messages, send messages in threads, create
// public threads, embed links, read message history.
const Permissions = discordgo.PermissionViewChannel | discordgo.PermissionSendMessages |
	discordgo.PermissionSendMessagesInThreads | discordgo.PermissionCreatePublicThreads |
	discordgo.PermissionEmbedLinks | discordgo.PermissionReadMessageHistory

// Config is what the adapter needs to know.
type Config struct {
	// Token is the bot token (secret), without the "Bot " prefix.
	Token string
	// APIURL is the REST API base (DefaultAPIURL when empty); the gateway
	// URL comes from GET {APIURL}/gateway/bot.
	APIURL string
	// ApplicationID registers the slash command; empty takes it from the
	// gateway's READY.
	ApplicationID string
	// PublicKey is the application's Ed25519 public key (hex). When set,
	// InteractionsHandler accepts interactions over HTTP, verified with it.
	PublicKey string
	// EscalationChannel is the staff channel handoffs are posted to; empty
	// posts them in the asker's thread.
	EscalationChannel string
	// EscalationRole is the role a handoff pings, in the thread and in the
	// staff channel; empty pings nobody.
	EscalationRole string
	// Command is the slash command's name; "ask" when empty.
	Command string
	// Inline lists the channels (by ID) where an answer replies to the
	// question in the channel instead of starting a thread; a reply to
	// one of the bot's answers there is a follow-up. A handoff still
	// starts a thread, where people talk.
	Inline map[string]bool
	// Forums lists, by forum channel ID, the tags its posts carry as they
	// move (answered, handed off, solved); missing tags are created where
	// the bot may manage the forum. In such a forum the asker's ✅ (or
	// "solved"), a ✅ by a holder of EscalationRole, or a resolved handoff
	// marks the post solved, and the bot then answers there only when
	// mentioned.
	Forums map[string]ForumTags
	// Resolutions records how each forum post was solved; nil only logs
	// it.
	Resolutions Resolutions
	// StreamInterval is the least time between two edits of an answer
	// being written; 1s when zero (Discord allows about 5 edits in 5s).
	StreamInterval time.Duration
	// Timeout bounds the handling of one event; 2m when zero.
	Timeout time.Duration
	// Workers and Backlog bound the events handled at once and waiting
	// (bot.NewIntake's defaults when 0): a burst of events holds a bounded
	// number of goroutines, and answers queue in the shared admission
	// control, not here. Interactions are acknowledged on workers of their
	// own, so that Discord's 3 seconds never wait behind the backlog.
	Workers, Backlog int
	// Clock waits between connection attempts (Run); the wall clock when
	// nil (tests pass a fake one).
	Clock backoff.Clock
}

// Client connects the bot core to Discord through a discordgo session:
// gateway events in, REST calls out. It is safe for concurrent use.
type Client struct {
	cfg  Config
	core *bot.Bot
	log  *slog.Logger
	s    *discordgo.Session
	pub  ed25519.PublicKey

	// acks acknowledge interactions; work handles events and what an
	// acknowledgement hands on.
	acks, work *bot.Intake

	mu        sync.Mutex
	closing   bool
	connected bool
	botID     string
	appID     string

	chanMu   sync.Mutex
	channels map[string]channelInfo

	// tags caches each configured forum's tag IDs by name.
	tagMu sync.Mutex
	tags  map[string]map[string]string
}

// channelInfo is what the adapter remembers of a channel or thread.
type channelInfo struct {
	typ      discordgo.ChannelType
	guildID  string
	parentID string
	name     string
	// ownerID is a thread's starter (a forum post's asker); appliedTags
	// a forum post's tags.
	ownerID     string
	appliedTags []string
}

func (c channelInfo) thread() bool {
	return c.typ == discordgo.ChannelTypeGuildPublicThread || c.typ == discordgo.ChannelTypeGuildPrivateThread ||
		c.typ == discordgo.ChannelTypeGuildNewsThread
}

func (c channelInfo) forum() bool {
	return c.typ == discordgo.ChannelTypeGuildForum || c.typ == discordgo.ChannelTypeGuildMedia
}

// NewClient returns a client for the bot core; log nil discards logs. It
// does not connect: Open does.
func NewClient(cfg Config, core *bot.Bot, log *slog.Logger) (*Client, error) {
	if cfg.Token == "" {
		return nil, errors.New("discord: no bot token")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	base, err := url.Parse(strings.TrimRight(cfg.APIURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("discord: api url %q is not an absolute http(s) URL", cfg.APIURL)
	}
	if cfg.Command == "" {
		cfg.Command = "ask"
	}
	if cfg.StreamInterval <= 0 {
		cfg.StreamInterval = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{cfg: cfg, core: core, log: log, appID: cfg.ApplicationID, channels: map[string]channelInfo{},
		tags: map[string]map[string]string{}}
	if cfg.PublicKey != "" {
		k, err := hex.DecodeString(cfg.PublicKey)
		if err != nil || len(k) != ed25519.PublicKeySize {
			return nil, errors.New("discord: public key must be the application's 64-hex-digit Ed25519 key")
		}
		c.pub = k
	}
	routeLibraryLogs(log)
	s, err := discordgo.New("Bot " + cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	// discordgo computes its endpoints from discord.com/api/v9 at start-up;
	// the transport sends them to APIURL instead.
	s.Client = &http.Client{Timeout: 20 * time.Second, Transport: rewrite{base: base, next: http.DefaultTransport}}
	s.Identify.Intents = Intents
	s.LogLevel = discordgo.LogWarning
	// The adapter keeps what it needs of channels itself; events are
	// handled in order (handlers hand work to goroutines at once).
	s.StateEnabled = false
	s.SyncEvents = true
	s.AddHandler(c.onReady)
	s.AddHandler(c.onGuildCreate)
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ChannelCreate) { c.remember(e.Channel) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ChannelUpdate) { c.remember(e.Channel) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadCreate) { c.remember(e.Channel) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadUpdate) { c.remember(e.Channel) })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.ThreadListSync) {
		for _, t := range e.Threads {
			c.remember(t)
		}
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageCreate) {
		c.spawn(func(ctx context.Context) { c.onMessage(ctx, e.Message) })
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageReactionAdd) {
		if len(cfg.Forums) > 0 {
			c.spawn(func(ctx context.Context) { c.onReaction(ctx, e.MessageReaction, e.Member) })
		}
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.InteractionCreate) {
		c.spawnAck(func(ctx context.Context) {
			work, err := c.acknowledge(ctx, e.Interaction)
			if err != nil {
				c.log.ErrorContext(ctx, "discord: acknowledge interaction", slog.String("interaction", e.ID), slog.Any("error", err))
				return
			}
			c.spawn(work)
		})
	})
	c.s = s
	c.acks = bot.NewIntake(8, cfg.Backlog)
	c.work = bot.NewIntake(cfg.Workers, cfg.Backlog)
	return c, nil
}

// Open connects to the gateway (identify, READY) and registers the slash
// command. It makes one attempt, and may be called again after a failure
// (a connected gateway is kept); once connected, discordgo reconnects on
// its own.
func (c *Client) Open(ctx context.Context) error {
	c.mu.Lock()
	closing, connected := c.closing, c.connected
	c.mu.Unlock()
	if closing {
		return errors.New("discord: client is closed")
	}
	if !connected {
		// The gateway URL is asked for first without discordgo's own
		// rate-limit sleep, so that a 429 reaches Run's backoff and its
		// clock (discordgo's Open asks again, without options).
		if _, err := c.s.Gateway(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false)); err != nil {
			if unauthorized(err) {
				return fmt.Errorf("%w: %w", ErrUnauthorized, clean(err))
			}
			return fmt.Errorf("discord: ask for the gateway: %w", clean(err))
		}
		if err := c.s.Open(); err != nil {
			if unauthorized(err) {
				return fmt.Errorf("%w: %w", ErrUnauthorized, clean(err))
			}
			return fmt.Errorf("discord: connect to the gateway: %w", clean(err))
		}
		c.mu.Lock()
		c.connected = true
		c.mu.Unlock()
	}
	c.mu.Lock()
	appID := c.appID
	c.mu.Unlock()
	if appID == "" {
		return errors.New("discord: READY named no application; set discord.application_id")
	}
	cmd := &discordgo.ApplicationCommand{
		Name:        c.cfg.Command,
		Description: "Ask a question about the docs; the answer cites its sources",
		Contexts:    &[]discordgo.InteractionContextType{discordgo.InteractionContextGuild, discordgo.InteractionContextBotDM},
		Options: []*discordgo.ApplicationCommandOption{{
			Type: discordgo.ApplicationCommandOptionString, Name: "question", Description: "What do you want to know?",
			Required: true, MaxLength: 1000,
		}},
	}
	if _, err := c.s.ApplicationCommandBulkOverwrite(appID, "", []*discordgo.ApplicationCommand{cmd}, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: register /%s: %w", c.cfg.Command, clean(err))
	}
	c.log.InfoContext(ctx, "discord: connected", slog.String("bot", c.me()), slog.String("command", "/"+c.cfg.Command))
	return nil
}

// Run connects, retrying with the one backoff of docent's clients
// (internal/backoff: from a second, doubling to a minute, jittered; a
// 429's retry_after waited as it is) while Discord cannot be reached, and
// takes events until ctx ends; then it stops (Stop). A token Discord
// refuses ends it with ErrUnauthorized.
func (c *Client) Run(ctx context.Context) error {
	r := backoff.Retrier{
		Policy: backoff.Policy{Base: time.Second, Max: time.Minute},
		Clock:  c.cfg.Clock,
		OnRetry: func(_ int, wait time.Duration, _ backoff.Failure, err error) {
			c.log.ErrorContext(ctx, "discord: cannot connect; retrying", slog.Duration("in", wait), slog.Any("error", err))
		},
	}
	err := r.Do(ctx, c.Open, classifyOpen)
	if errors.Is(err, ErrUnauthorized) {
		return err
	}
	if err == nil {
		<-ctx.Done()
	}
	c.Stop()
	return nil
}

// classifyOpen reads a failed connection attempt: a refused token is
// final; a 429 waits its retry_after; anything else (Discord down, a
// network error, a 5xx) is retried.
func classifyOpen(err error) backoff.Failure {
	if errors.Is(err, ErrUnauthorized) {
		return backoff.Failure{}
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return backoff.Failure{Transient: true, RateLimited: true, After: rl.RetryAfter}
	}
	return backoff.Failure{Transient: true}
}

// Stop stops taking events and closes the gateway (the close frame goes
// at once; discordgo closes the socket a second later); answers in flight
// go on (Close waits for them).
func (c *Client) Stop() {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	connected := c.connected
	c.mu.Unlock()

	// discordgo sends its first heartbeat without checking whether the
	// session is closing: closed before that beat, the session would
	// reconnect. It marks DataReady once the beat is out.
	for deadline := time.Now().Add(5 * time.Second); connected && !c.beating() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// discordgo sends the close frame at once, then waits a second for
	// the server to close the socket before it closes it itself: that wait
	// holds up nothing of ours.
	go func() {
		if err := c.s.Close(); err != nil {
			c.log.Warn("discord: close the gateway", slog.Any("error", err))
		}
	}()
}

// Close stops taking events, closes the gateway, and waits for the
// events taken to be handled and the core's answers in flight to be
// posted (until ctx ends, when they are cancelled).
func (c *Client) Close(ctx context.Context) error {
	c.Stop()
	err := errors.Join(c.acks.Close(ctx), c.work.Close(ctx), c.core.Shutdown(ctx))
	if err != nil {
		c.log.Warn("discord: answers still in flight at shutdown were cancelled", slog.Any("error", err))
	}
	return nil
}

// beating reports whether the gateway session has sent a heartbeat.
func (c *Client) beating() bool {
	c.s.RLock()
	defer c.s.RUnlock()
	return c.s.DataReady
}

// spawn queues fn for one event on the work intake (bounded workers,
// bounded backlog), unless the client is closing or the backlog is full.
func (c *Client) spawn(fn func(ctx context.Context)) bool {
	return c.queue(c.work, fn)
}

// spawnAck queues an interaction's acknowledgement on its own workers.
func (c *Client) spawnAck(fn func(ctx context.Context)) bool {
	return c.queue(c.acks, fn)
}

func (c *Client) queue(in *bot.Intake, fn func(ctx context.Context)) bool {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return false
	}
	ok := in.Go(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		fn(ctx)
	})
	if !ok {
		c.log.Warn("discord: event not taken: shutting down, or the backlog is full")
	}
	return ok
}

func (c *Client) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.User != nil {
		c.botID = r.User.ID
	}
	if c.appID == "" && r.Application != nil {
		c.appID = r.Application.ID
	}
}

func (c *Client) onGuildCreate(_ *discordgo.Session, g *discordgo.GuildCreate) {
	for _, ch := range g.Channels {
		ch.GuildID = g.ID
		c.remember(ch)
	}
	for _, th := range g.Threads {
		th.GuildID = g.ID
		c.remember(th)
	}
}

// me is the bot's user ID.
func (c *Client) me() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.botID
}

// maxChannels bounds the channel cache; past it the cache starts over
// (channels are looked up again on demand).
const maxChannels = 50_000

func (c *Client) remember(ch *discordgo.Channel) {
	if ch == nil || ch.ID == "" {
		return
	}
	c.chanMu.Lock()
	defer c.chanMu.Unlock()
	if len(c.channels) >= maxChannels {
		c.channels = map[string]channelInfo{}
	}
	c.channels[ch.ID] = infoOf(ch)
}

func infoOf(ch *discordgo.Channel) channelInfo {
	return channelInfo{typ: ch.Type, guildID: ch.GuildID, parentID: ch.ParentID, name: ch.Name, ownerID: ch.OwnerID,
		appliedTags: slices.Clone(ch.AppliedTags)}
}

// channel returns a channel or thread, from the cache or the API.
func (c *Client) channel(ctx context.Context, id string) (channelInfo, error) {
	c.chanMu.Lock()
	info, ok := c.channels[id]
	c.chanMu.Unlock()
	if ok {
		return info, nil
	}
	ch, err := c.s.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return channelInfo{}, fmt.Errorf("discord: get channel %s: %w", id, clean(err))
	}
	c.remember(ch)
	return infoOf(ch), nil
}

// rewrite sends discordgo's requests for https://discord.com/api/v9/...
// to the configured API base. GET /gateway becomes GET /gateway/bot,
// which answers with the same URL for an authenticated bot.
type rewrite struct {
	base *url.URL
	next http.RoundTripper
}

// libraryAPI is the API path discordgo builds its endpoints under.
var libraryAPI = "/api/v" + discordgo.APIVersion

func (t rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "discord.com" || !strings.HasPrefix(r.URL.Path, libraryAPI+"/") {
		return t.next.RoundTrip(r)
	}
	rest := strings.TrimPrefix(r.URL.EscapedPath(), libraryAPI)
	if rest == "/gateway" {
		rest = "/gateway/bot"
	}
	u, err := url.Parse(t.base.String() + rest)
	if err != nil {
		return nil, err
	}
	u.RawQuery = r.URL.RawQuery
	out := r.Clone(r.Context())
	out.URL, out.Host = u, u.Host
	return t.next.RoundTrip(out)
}

// clean drops the URL from a transport error: interaction webhook URLs
// carry the interaction's token.
func clean(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s request: %w", ue.Op, ue.Err)
	}
	return err
}

// ErrUnauthorized is returned by Open when Discord refuses the token.
var ErrUnauthorized = errors.New("discord: the bot token was refused")

// unauthorized reports whether err is Discord refusing the token: 401
// from the API, or the gateway closing with 4004.
func unauthorized(err error) bool {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
		return true
	}
	var ce *websocket.CloseError
	return errors.As(err, &ce) && ce.Code == 4004
}

// restCode returns the Discord error code of a REST error, or 0.
func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

var (
	libraryLog  atomic.Pointer[slog.Logger]
	installOnce sync.Once
)

// routeLibraryLogs sends discordgo's own log lines (warnings and errors:
// reconnects, undecodable events) to log instead of the standard logger.
// discordgo has one logger per process: the latest client's wins.
func routeLibraryLogs(log *slog.Logger) {
	libraryLog.Store(log)
	installOnce.Do(func() {
		discordgo.Logger = func(level, _ int, format string, args ...any) {
			l := libraryLog.Load()
			msg := "discordgo: " + fmt.Sprintf(format, args...)
			switch level {
			case discordgo.LogError:
				l.Error(msg)
			case discordgo.LogWarning:
				l.Warn(msg)
			default:
				l.Debug(msg)
			}
		}
	})
}
