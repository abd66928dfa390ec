package discordtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// gwConn is one gateway websocket connection.
type gwConn struct {
	ws      *websocket.Conn
	wmu     sync.Mutex
	session *session
	// beats counts the client's heartbeats; beatSeq is the sequence the
	// last one carried (the last dispatch the client had handled).
	beats, beatSeq int
}

func (c *gwConn) send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

func (c *gwConn) closeWith(code int, reason string) {
	c.wmu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	c.wmu.Unlock()
	c.ws.Close()
}

// session is an identified gateway session; it outlives its connection
// so that a client can resume it.
type session struct {
	id      string
	intents int
	seq     int
	log     []sent
	conn    *gwConn
}

type sent struct {
	seq   int
	event string
	data  json.RawMessage
}

// payload is what a client sends.
type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

// frame is what the gateway writes.
type frame struct {
	Op int     `json:"op"`
	D  any     `json:"d"`
	S  *int    `json:"s"`
	T  *string `json:"t"`
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// gatewayURL is the websocket URL GET /gateway and /gateway/bot return:
// like Discord's (wss://gateway.discord.gg), a bare host, where clients
// connect to "/?v=10&encoding=json".
func (s *Server) gatewayURL() string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http")
}

// serveGateway speaks the gateway protocol on one connection.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws}
	version, encoding := r.URL.Query().Get("v"), r.URL.Query().Get("encoding")
	s.mu.Lock()
	s.conns[c] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		if c.session != nil && c.session.conn == c {
			c.session.conn = nil
		}
		s.touchLocked()
		s.mu.Unlock()
		ws.Close()
	}()
	if encoding != "" && encoding != "json" {
		c.closeWith(4002, "Decode error")
		return
	}
	if err := c.send(frame{Op: opHello, D: map[string]any{"heartbeat_interval": s.heartbeat.Milliseconds()}}); err != nil {
		return
	}
	for {
		var p payload
		if err := ws.ReadJSON(&p); err != nil {
			return
		}
		switch p.Op {
		case opHeartbeat:
			var seq *int
			_ = json.Unmarshal(p.D, &seq)
			s.mu.Lock()
			s.heartbeats++
			c.beats++
			if seq != nil {
				c.beatSeq = *seq
			}
			s.touchLocked()
			s.mu.Unlock()
			if c.send(frame{Op: opHeartbeatACK}) != nil {
				return
			}
		case opIdentify:
			if !s.identify(c, p.D, version, encoding) {
				return
			}
		case opResume:
			if !s.resume(c, p.D) {
				return
			}
		case 3, 4, 8: // presence, voice state, request guild members: accepted, ignored
			if c.session == nil {
				c.closeWith(4003, "Not authenticated")
				return
			}
		default:
			c.closeWith(4001, "Unknown opcode")
			return
		}
	}
}

func (s *Server) tokenOK(t string) bool {
	return t == s.Token || t == "Bot "+s.Token
}

// identify starts a session: READY, then GUILD_CREATE with the guild's
// channels, active threads and roles.
func (s *Server) identify(c *gwConn, raw json.RawMessage, version, encoding string) bool {
	var id struct {
		Token   string `json:"token"`
		Intents *int   `json:"intents"`
	}
	if err := json.Unmarshal(raw, &id); err != nil {
		c.closeWith(4002, "Decode error")
		return false
	}
	if c.session != nil {
		c.closeWith(4005, "Already authenticated")
		return false
	}
	if !s.tokenOK(id.Token) {
		c.closeWith(4004, "Authentication failed")
		return false
	}
	if id.Intents == nil {
		c.closeWith(4013, "Invalid intent(s)")
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identifies = append(s.identifies, Identify{Token: id.Token, Intents: *id.Intents, Version: version, Encoding: encoding})
	se := &session{id: "session-" + s.newID(), intents: *id.Intents, conn: c}
	s.sessions[se.id] = se
	c.session = se
	ready := map[string]any{
		"v":                  10,
		"user":               s.Bot,
		"guilds":             []any{map[string]any{"id": s.GuildID, "unavailable": true}},
		"session_id":         se.id,
		"resume_gateway_url": s.gatewayURL(),
		"shard":              []int{0, 1},
		"application":        map[string]any{"id": s.AppID, "flags": 0},
		"private_channels":   []any{},
	}
	s.sendLocked(se, "READY", ready)
	if se.intents&IntentGuilds != 0 {
		s.sendLocked(se, "GUILD_CREATE", s.guildLocked())
	}
	s.touchLocked()
	return true
}

// guildLocked is the GUILD_CREATE payload.
func (s *Server) guildLocked() map[string]any {
	channels, threads := []Channel{}, []Channel{}
	for _, id := range s.chanOrder {
		c := s.channels[id]
		if c.IsThread() {
			threads = append(threads, *c)
		} else if c.GuildID != "" {
			channels = append(channels, *c)
		}
	}
	return map[string]any{
		"id": s.GuildID, "name": "Kestrel Robotics", "icon": nil, "owner_id": s.newID(), "roles": s.roles,
		"emojis": []any{}, "features": []any{}, "stickers": []any{}, "member_count": 3, "large": false,
		"unavailable": false, "joined_at": now(), "preferred_locale": "en-US", "premium_tier": 0,
		"verification_level": 0, "default_message_notifications": 1, "explicit_content_filter": 0,
		"mfa_level": 0, "nsfw_level": 0, "system_channel_flags": 0, "afk_timeout": 300,
		"members":      []Member{{User: &s.Bot, Roles: []string{}, JoinedAt: now()}},
		"channels":     channels,
		"threads":      threads,
		"voice_states": []any{}, "presences": []any{}, "stage_instances": []any{},
		"guild_scheduled_events": []any{}, "soundboard_sounds": []any{},
	}
}

// resume re-attaches a session and replays the events it missed.
func (s *Server) resume(c *gwConn, raw json.RawMessage) bool {
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int    `json:"seq"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		c.closeWith(4002, "Decode error")
		return false
	}
	if !s.tokenOK(r.Token) {
		c.closeWith(4004, "Authentication failed")
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.sessions[r.SessionID]
	if !ok {
		_ = c.send(frame{Op: opInvalidSession, D: false})
		return true
	}
	se.conn, c.session = c, se
	for _, e := range se.log {
		if e.seq > r.Seq {
			seq, t := e.seq, e.event
			if c.send(frame{Op: opDispatch, D: e.data, S: &seq, T: &t}) != nil {
				return false
			}
		}
	}
	s.sendLocked(se, "RESUMED", map[string]any{})
	s.touchLocked()
	return true
}

// dispatchLocked sends an event to every session whose intents include
// need (0: always); data returns the payload for a session's intents, or
// false to skip it.
func (s *Server) dispatchLocked(event string, need int, data func(intents int) (any, bool)) {
	for _, se := range s.sessions {
		if need != 0 && se.intents&need == 0 {
			continue
		}
		d, ok := data(se.intents)
		if !ok {
			continue
		}
		s.sendLocked(se, event, d)
	}
}

// sendLocked sends one dispatch to a session (or keeps it for a resume
// when the session has no connection).
func (s *Server) sendLocked(se *session, event string, d any) {
	raw, err := json.Marshal(d)
	if err != nil {
		s.tb.Errorf("discordtest: encode %s: %v", event, err)
		return
	}
	se.seq++
	se.log = append(se.log, sent{se.seq, event, raw})
	if len(se.log) > 500 {
		se.log = se.log[len(se.log)-500:]
	}
	if se.conn == nil {
		return
	}
	seq, t := se.seq, event
	if err := se.conn.send(frame{Op: opDispatch, D: json.RawMessage(raw), S: &seq, T: &t}); err != nil {
		se.conn.ws.Close()
		se.conn = nil
	}
}

// Flush waits until every connected client has handled every dispatch
// sent to it so far: it asks each for a heartbeat (op 1), which a client
// answers from its event loop, after the events before it, with the
// sequence of the last one it handled. A test then asserts what a client
// did not do with those events, instead of sleeping.
func (s *Server) Flush(tb testing.TB) {
	tb.Helper()
	type mark struct{ beats, seq int }
	want := map[*gwConn]mark{}
	s.mu.Lock()
	for c := range s.conns {
		if c.session == nil || c.session.conn != c {
			continue
		}
		want[c] = mark{c.beats, c.session.seq}
	}
	s.mu.Unlock()
	for c := range want {
		if err := c.send(frame{Op: opHeartbeat}); err != nil {
			delete(want, c)
		}
	}
	s.WaitFor(tb, "the clients to handle the events sent", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c, m := range want {
			if s.conns[c] && (c.beats <= m.beats || c.beatSeq < m.seq) {
				return false
			}
		}
		return true
	})
}

// Disconnect drops every gateway connection without a close frame, as a
// network failure would; clients are expected to resume.
func (s *Server) Disconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.ws.Close()
		if c.session != nil && c.session.conn == c {
			c.session.conn = nil
		}
	}
}
