// Package discordtest is a local Discord for tests: the REST API
// endpoints docent's Discord adapter calls and the gateway websocket,
// speaking Discord's documented JSON (API v10) with the limits Discord
// enforces, so that a real discordgo session can be pointed at it.
//
// The gateway sends HELLO, takes IDENTIFY (token and intents checked),
// answers with READY and GUILD_CREATE, acknowledges heartbeats, resumes
// sessions with the events they missed, and dispatches MESSAGE_CREATE,
// MESSAGE_UPDATE, THREAD_CREATE and INTERACTION_CREATE to the sessions
// whose intents ask for them (guild messages lose their content without
// the MESSAGE_CONTENT intent, as on Discord). The REST API answers get
// gateway, channels, messages (create, edit, get), threads started from
// messages, typing, application commands, interaction callbacks and the
// interaction webhooks (original response and follow-ups), and refuses
// what Discord refuses: bodies over the length limits, malformed
// components, a second acknowledgement, a callback after three seconds,
// messages sent to a forum channel, edits of other people's messages.
//
// Tests play the people: Post, ForumPost, Click, SubmitModal and Command
// act as a user would in the Discord client. When interactions are set
// to go over HTTP (SetInteractionsURL), they are POSTed to the bot signed
// with the application's Ed25519 key, as Discord does.
package discordtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one REST request the server received.
type Request struct {
	Method string
	// Path is the path below the API base, e.g. "/channels/1/messages".
	Path   string
	Body   []byte
	Status int
}

// Identify is an IDENTIFY payload the gateway received.
type Identify struct {
	Token   string
	Intents int
	// Version and Encoding are the gateway URL's v and encoding.
	Version  string
	Encoding string
}

// Option configures a Server.
type Option func(*Server)

// WithHeartbeat sets the heartbeat interval sent in HELLO (default 41.25s).
func WithHeartbeat(d time.Duration) Option { return func(s *Server) { s.heartbeat = d } }

// WithWait sets how long WaitFor waits (default 30s).
func WithWait(d time.Duration) Option { return func(s *Server) { s.wait = d } }

// Server is a local Discord with one guild, one application and its bot
// user. It is safe for concurrent use.
type Server struct {
	// URL is the REST API base to set as discord.api_url.
	URL string
	// Token is the bot token it accepts.
	Token string
	// AppID is the application ID; GuildID the one guild.
	AppID   string
	GuildID string
	// Bot is the application's bot user.
	Bot User

	tb        testing.TB
	srv       *httptest.Server
	pub       ed25519.PublicKey
	priv      ed25519.PrivateKey
	heartbeat time.Duration
	wait      time.Duration
	// ackDeadline is how long an interaction may wait for its first
	// response (3s on Discord).
	ackDeadline time.Duration

	mu           sync.Mutex
	changed      chan struct{}
	next         int64
	roles        []Role
	channels     map[string]*Channel
	chanOrder    []string
	messages     map[string]*Message
	order        map[string][]string
	pings        map[string][]string
	interactions map[string]*interactionState
	commands     []Command
	requests     []Request
	sessions     map[string]*session
	conns        map[*gwConn]bool
	identifies   []Identify
	heartbeats   int
	ixURL        string
	// limited are the routes ("GET /gateway/bot") whose next request is
	// refused with 429 and the wait to ask for.
	limited map[string]time.Duration
	// denyManage refuses edits of forum tags (DenyManageChannels).
	denyManage bool
}

// NewServer starts a local Discord; it stops when the test ends.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{tb: tb, pub: pub, priv: priv, heartbeat: 41250 * time.Millisecond, wait: 30 * time.Second,
		ackDeadline: 3 * time.Second, changed: make(chan struct{}), next: 1_200_000_000_000_000_000,
		channels: map[string]*Channel{}, messages: map[string]*Message{}, order: map[string][]string{},
		pings: map[string][]string{}, interactions: map[string]*interactionState{}, sessions: map[string]*session{},
		conns: map[*gwConn]bool{}, limited: map[string]time.Duration{}}
	for _, o := range opts {
		o(s)
	}
	s.Token = "MTIzNDU2Nzg5.test." + hex.EncodeToString(priv[:8])
	s.AppID = s.newID()
	s.GuildID = s.newID()
	s.Bot = User{ID: s.AppID, Username: "docent", Discriminator: "0", Bot: true}
	s.roles = []Role{{ID: s.GuildID, Name: "@everyone", Permissions: "1071698660929"}}

	mux := http.NewServeMux()
	s.routes(mux)
	s.srv = httptest.NewServer(s.record(mux))
	s.URL = s.srv.URL + apiBase
	tb.Cleanup(s.Close)
	return s
}

// apiBase is where the REST API lives on the server.
const apiBase = "/api/v10"

// Close closes every gateway connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	for c := range s.conns {
		c.ws.Close()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// PublicKey is the application's Ed25519 public key, hex-encoded, as the
// developer portal shows it.
func (s *Server) PublicKey() string { return hex.EncodeToString(s.pub) }

// Sign signs an interaction delivery: the hex signature of timestamp+body.
func (s *Server) Sign(timestamp string, body []byte) string {
	return hex.EncodeToString(ed25519.Sign(s.priv, append([]byte(timestamp), body...)))
}

// SetInteractionsURL makes interactions go to url over HTTP, signed,
// instead of over the gateway ("" switches back).
func (s *Server) SetInteractionsURL(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ixURL = url
}

func (s *Server) newID() string {
	s.next++
	return strconv.FormatInt(s.next, 10)
}

// touchLocked wakes WaitFor.
func (s *Server) touchLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitFor waits until cond holds, failing the test after the wait.
func (s *Server) WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.After(s.wait)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("discordtest: timed out after %s waiting for %s", s.wait, what)
		}
	}
}

// AddUser returns a new (human) user.
func (s *Server) AddUser(name string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return User{ID: s.newID(), Username: name, Discriminator: "0", GlobalName: name}
}

// AddRole adds a mentionable role to the guild and returns its ID.
func (s *Server) AddRole(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Role{ID: s.newID(), Name: name, Permissions: "0", Mentionable: true, Position: len(s.roles)}
	s.roles = append(s.roles, r)
	return r.ID
}

// AddChannel adds a guild channel (ChannelText or ChannelForum) and
// returns it; sessions already connected get CHANNEL_CREATE.
func (s *Server) AddChannel(name string, typ int) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Channel{ID: s.newID(), Type: typ, GuildID: s.GuildID, Name: name}
	s.channels[c.ID] = c
	s.chanOrder = append(s.chanOrder, c.ID)
	s.dispatchLocked("CHANNEL_CREATE", IntentGuilds, func(int) (any, bool) { return c, true })
	s.touchLocked()
	return *c
}

// DM returns the direct-message channel between the bot and u.
func (s *Server) DM(u User) Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.channels {
		if c.Type == ChannelDM && len(c.Recipients) == 1 && c.Recipients[0].ID == u.ID {
			return *c
		}
	}
	c := &Channel{ID: s.newID(), Type: ChannelDM, Recipients: []User{u}}
	s.channels[c.ID] = c
	return *c
}

// Channel returns a channel or thread by ID.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// Messages returns the messages everyone can see in a channel or
// thread, oldest first (ephemeral messages are left out).
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, id := range s.order[channelID] {
		if m, ok := s.messages[id]; ok && m.Flags&FlagEphemeral == 0 {
			out = append(out, *m)
		}
	}
	return out
}

// BotMessages returns the bot's visible messages in a channel or thread.
func (s *Server) BotMessages(channelID string) []Message {
	var out []Message
	for _, m := range s.Messages(channelID) {
		if m.Author.ID == s.Bot.ID {
			out = append(out, m)
		}
	}
	return out
}

// Message returns a message by ID.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Pinged returns the role and user IDs a message notified when it was
// created (edits notify nobody), per its content and allowed_mentions.
func (s *Server) Pinged(messageID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pings[messageID])
}

// Requests returns every REST request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// RequestsTo returns the requests whose method and path match a pattern
// like "POST /channels/*/messages" (each * is one path segment).
func (s *Server) RequestsTo(pattern string) []Request {
	method, path, _ := strings.Cut(pattern, " ")
	re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(path), `\*`, `[^/]+`) + "$")
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == method && re.MatchString(r.Path) {
			out = append(out, r)
		}
	}
	return out
}

// Commands returns the registered global application commands.
func (s *Server) Commands() []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

// Identifies returns the IDENTIFY payloads received.
func (s *Server) Identifies() []Identify {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.identifies)
}

// Connected reports how many gateway sessions are identified and live.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.session != nil {
			n++
		}
	}
	return n
}

// Heartbeats returns how many heartbeats the gateway received.
func (s *Server) Heartbeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heartbeats
}

// WaitReady waits until a session is identified and has sent its first
// heartbeat (closing a discordgo session before that can leave it
// reconnecting).
func (s *Server) WaitReady(tb testing.TB) {
	tb.Helper()
	s.WaitFor(tb, "a gateway session and its first heartbeat", func() bool {
		return s.Connected() > 0 && s.Heartbeats() > 0
	})
}

// PostOption changes a message a user posts.
type PostOption func(*Message)

// ReplyTo makes the message a reply to another message.
func ReplyTo(m Message) PostOption {
	return func(msg *Message) {
		msg.Type = MessageReply
		msg.MessageReference = &MessageReference{Type: 0, MessageID: m.ID, ChannelID: m.ChannelID, GuildID: m.GuildID}
		ref := m
		msg.ReferencedMessage = &ref
	}
}

// WithRoles gives the author these guild roles (in the message's member).
func WithRoles(roles ...string) PostOption {
	return func(msg *Message) {
		if msg.Member != nil {
			msg.Member.Roles = append(msg.Member.Roles, roles...)
		}
	}
}

var (
	userMention = regexp.MustCompile(`<@!?(\d+)>`)
	roleMention = regexp.MustCompile(`<@&(\d+)>`)
)

// Post has user u send content in a channel, thread or DM, and returns
// the message; sessions get MESSAGE_CREATE. "<@ID>" in content mentions
// that user (the bot: s.Bot.Mention()).
func (s *Server) Post(channelID string, u User, content string, opts ...PostOption) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[channelID]
	if !ok || c.Type == ChannelForum {
		s.tb.Fatalf("discordtest: Post to %s: no such text channel, thread or DM", channelID)
	}
	m := s.userMessageLocked(c, s.newID(), u, content)
	for _, o := range opts {
		o(m)
	}
	s.storeLocked(m)
	s.dispatchMessageLocked("MESSAGE_CREATE", m)
	s.touchLocked()
	return *m
}

// ForumPost has user u open a post (a thread and its starter message,
// which share an ID) in a forum channel; sessions get THREAD_CREATE, then
// MESSAGE_CREATE.
func (s *Server) ForumPost(forumID string, u User, title, content string) (Channel, Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.channels[forumID]
	if !ok || f.Type != ChannelForum {
		s.tb.Fatalf("discordtest: ForumPost to %s: no such forum", forumID)
	}
	id := s.newID()
	th := &Channel{ID: id, Type: ChannelPublicThrd, GuildID: s.GuildID, Name: title, ParentID: forumID, OwnerID: u.ID,
		ThreadMetadata: &ThreadMetadata{AutoArchiveDuration: 4320, ArchiveTimestamp: now()}}
	s.channels[id] = th
	s.chanOrder = append(s.chanOrder, id)
	s.dispatchLocked("THREAD_CREATE", IntentGuilds, func(int) (any, bool) {
		return struct {
			*Channel
			NewlyCreated bool `json:"newly_created"`
		}{th, true}, true
	})
	m := s.userMessageLocked(th, id, u, content)
	s.storeLocked(m)
	s.dispatchMessageLocked("MESSAGE_CREATE", m)
	s.touchLocked()
	return *th, *m
}

// AddTags gives a forum tags with these names.
func (s *Server) AddTags(forumID string, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.channels[forumID]
	if !ok || f.Type != ChannelForum {
		s.tb.Fatalf("discordtest: AddTags to %s: no such forum", forumID)
	}
	for _, n := range names {
		f.AvailableTags = append(f.AvailableTags, ForumTag{ID: s.newID(), Name: n})
	}
	s.touchLocked()
}

// DenyManageChannels makes editing a forum's tags fail with Missing
// Permissions, as for a bot without Manage Channels.
func (s *Server) DenyManageChannels() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denyManage = true
}

// AppliedTags returns the names of the tags a forum post carries, in
// the order applied.
func (s *Server) AppliedTags(threadID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.channels[threadID]
	if !ok {
		return nil
	}
	var names []string
	if f, ok := s.channels[th.ParentID]; ok {
		for _, id := range th.AppliedTags {
			for _, t := range f.AvailableTags {
				if t.ID == id {
					names = append(names, t.Name)
				}
			}
		}
	}
	return names
}

// React has user u (holding roles) add the emoji reaction ("✅") to
// message m; sessions with the reactions intent get
// MESSAGE_REACTION_ADD.
func (s *Server) React(m Message, u User, emoji string, roles ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := map[string]any{"user_id": u.ID, "channel_id": m.ChannelID, "message_id": m.ID, "guild_id": m.GuildID,
		"message_author_id": m.Author.ID, "emoji": map[string]any{"id": nil, "name": emoji}, "burst": false, "type": 0}
	if m.GuildID != "" {
		if roles == nil {
			roles = []string{}
		}
		ev["member"] = Member{User: &u, Roles: roles, JoinedAt: now()}
	}
	s.dispatchLocked("MESSAGE_REACTION_ADD", IntentGuildMessageReactions, func(int) (any, bool) { return ev, true })
	s.touchLocked()
}

// Redeliver sends MESSAGE_CREATE for a message again, as a gateway may
// after a reconnect.
func (s *Server) Redeliver(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, ok := s.messages[m.ID]
	if !ok {
		s.tb.Fatalf("discordtest: Redeliver: no message %s", m.ID)
	}
	s.dispatchMessageLocked("MESSAGE_CREATE", stored)
}

func (s *Server) userMessageLocked(c *Channel, id string, u User, content string) *Message {
	m := &Message{ID: id, ChannelID: c.ID, GuildID: c.GuildID, Author: u, Content: content, Timestamp: now(),
		Type: MessageDefault, Mentions: []User{}, MentionRoles: []string{}, Embeds: []Embed{}, Components: []Component{},
		Attachments: []json.RawMessage{}}
	if c.GuildID != "" {
		m.Member = &Member{Roles: []string{}, JoinedAt: now()}
	}
	for _, sub := range userMention.FindAllStringSubmatch(content, -1) {
		if sub[1] == s.Bot.ID {
			m.Mentions = append(m.Mentions, s.Bot)
		} else {
			m.Mentions = append(m.Mentions, User{ID: sub[1], Username: "user" + sub[1], Discriminator: "0"})
		}
	}
	for _, sub := range roleMention.FindAllStringSubmatch(content, -1) {
		m.MentionRoles = append(m.MentionRoles, sub[1])
	}
	return m
}

func (s *Server) storeLocked(m *Message) {
	s.messages[m.ID] = m
	s.order[m.ChannelID] = append(s.order[m.ChannelID], m.ID)
}

// dispatchMessageLocked sends a message event to the sessions whose
// intents cover it, without content for those lacking MESSAGE_CONTENT
// (unless it is a DM, mentions the bot or is the bot's own).
func (s *Server) dispatchMessageLocked(event string, m *Message) {
	need := IntentGuildMessages
	if m.GuildID == "" {
		need = IntentDirectMessages
	}
	s.dispatchLocked(event, need, func(intents int) (any, bool) {
		cp := *m
		mentioned := slices.ContainsFunc(m.Mentions, func(u User) bool { return u.ID == s.Bot.ID })
		if intents&IntentMessageContent == 0 && m.GuildID != "" && !mentioned && m.Author.ID != s.Bot.ID {
			cp.Content, cp.Embeds, cp.Components, cp.Attachments = "", []Embed{}, []Component{}, []json.RawMessage{}
		}
		return &cp, true
	})
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, e *apiError) { writeJSON(w, status, e) }
