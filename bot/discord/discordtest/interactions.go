package discordtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// interactionState is one interaction and what the bot answered.
type interactionState struct {
	id, token string
	typ       int
	channelID string
	user      User
	created   time.Time
	payload   []byte
	// callback is the initial response type (0: none yet).
	callback int
	// original is the message the initial response made (types 4 and 5).
	original string
	// followups are messages sent with the token after the response.
	followups []string
	modal     *Modal
	// status and body are the bot's HTTP answer when delivered over HTTP.
	status int
	body   []byte
}

// Interaction is a handle on an interaction a test started.
type Interaction struct {
	ID, Token string
	s         *Server
}

func (ix *Interaction) state() *interactionState { return ix.s.interactions[ix.Token] }

// Callback returns the type of the bot's initial response (0: none yet).
func (ix *Interaction) Callback() int {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	return ix.state().callback
}

// Original returns the message of the initial response, once there is one.
func (ix *Interaction) Original() (Message, bool) {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	m, ok := ix.s.messages[ix.state().original]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Followups returns the follow-up messages, ephemeral ones included.
func (ix *Interaction) Followups() []Message {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	var out []Message
	for _, id := range ix.state().followups {
		if m, ok := ix.s.messages[id]; ok {
			out = append(out, *m)
		}
	}
	return out
}

// Modal returns the modal the bot opened, if it did.
func (ix *Interaction) Modal() *Modal {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	return ix.state().modal
}

// HTTPStatus returns the bot's HTTP status for an interaction delivered
// over HTTP (0 over the gateway) and the body it answered with.
func (ix *Interaction) HTTPStatus() (int, []byte) {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	st := ix.state()
	return st.status, st.body
}

// Payload returns the interaction JSON as delivered.
func (ix *Interaction) Payload() []byte {
	ix.s.mu.Lock()
	defer ix.s.mu.Unlock()
	return slices.Clone(ix.state().payload)
}

// Click has user u press the button customID on message m.
func (s *Server) Click(m Message, customID string, u User) *Interaction {
	found := false
	for _, b := range Buttons(m.Components) {
		if b.CustomID == customID && !b.Disabled {
			found = true
		}
	}
	if !found {
		s.tb.Fatalf("discordtest: Click: message %s has no enabled button %q", m.ID, customID)
	}
	msg := m
	return s.interact(InteractionComponent, m.ChannelID, u, map[string]any{"custom_id": customID, "component_type": ComponentButton}, &msg)
}

// SubmitModal has user u submit the modal the bot opened for ix, with
// the given text input values by custom_id.
func (s *Server) SubmitModal(ix *Interaction, u User, values map[string]string) *Interaction {
	mo := ix.Modal()
	if mo == nil {
		s.tb.Fatalf("discordtest: SubmitModal: the bot opened no modal for interaction %s", ix.ID)
	}
	var rows []Component
	for _, r := range mo.Components {
		in := r.Components[0]
		rows = append(rows, Component{Type: ComponentActionRow, Components: []Component{{Type: ComponentTextInput, CustomID: in.CustomID, Value: values[in.CustomID]}}})
	}
	s.mu.Lock()
	st := ix.state()
	var orig struct {
		Message *Message `json:"message"`
	}
	_ = json.Unmarshal(st.payload, &orig) // a modal opened from a button carries its message
	ch := st.channelID
	s.mu.Unlock()
	return s.interact(InteractionModalSubmit, ch, u, map[string]any{"custom_id": mo.CustomID, "components": rows}, orig.Message)
}

// Command has user u run the chat input command name in a channel, with
// string options.
func (s *Server) Command(channelID string, u User, name string, options map[string]string) *Interaction {
	s.mu.Lock()
	var cmd *Command
	for i := range s.commands {
		if s.commands[i].Name == name {
			cmd = &s.commands[i]
		}
	}
	s.mu.Unlock()
	if cmd == nil {
		s.tb.Fatalf("discordtest: Command: no command %q is registered", name)
	}
	var opts []map[string]any
	for _, o := range cmd.Options {
		if v, ok := options[o.Name]; ok {
			opts = append(opts, map[string]any{"name": o.Name, "type": o.Type, "value": v})
		}
	}
	return s.interact(InteractionCommand, channelID, u, map[string]any{"id": cmd.ID, "name": name, "type": 1, "options": opts}, nil)
}

// Ping delivers a PING interaction over HTTP and returns the bot's answer.
func (s *Server) Ping() (int, []byte) {
	ix := s.interact(InteractionPing, "", User{}, nil, nil)
	return ix.HTTPStatus()
}

// interact builds an interaction and delivers it over the gateway, or
// over HTTP (signed) when SetInteractionsURL was called.
func (s *Server) interact(typ int, channelID string, u User, data any, msg *Message) *Interaction {
	s.mu.Lock()
	st := &interactionState{id: s.newID(), token: "aW50ZXJhY3Rpb24." + s.newID(), typ: typ, channelID: channelID, user: u, created: time.Now()}
	p := map[string]any{"id": st.id, "application_id": s.AppID, "type": typ, "token": st.token, "version": 1,
		"entitlements": []any{}, "app_permissions": "2248473465835073", "attachment_size_limit": 26214400}
	if typ != InteractionPing {
		c, ok := s.channels[channelID]
		if !ok {
			s.mu.Unlock()
			s.tb.Fatalf("discordtest: interaction in unknown channel %s", channelID)
		}
		p["data"], p["channel_id"], p["locale"] = data, channelID, "en-US"
		p["channel"] = map[string]any{"id": c.ID, "type": c.Type, "name": c.Name, "parent_id": c.ParentID, "guild_id": c.GuildID, "flags": 0}
		if c.GuildID != "" {
			p["guild_id"], p["guild_locale"], p["context"] = c.GuildID, "en-US", 0
			p["guild"] = map[string]any{"id": c.GuildID, "locale": "en-US", "features": []any{}}
			p["member"] = Member{User: &u, Roles: []string{}, JoinedAt: now(), Permissions: "2248473465835073"}
			p["authorizing_integration_owners"] = map[string]string{"0": c.GuildID}
		} else {
			p["user"], p["context"] = u, 1
			p["authorizing_integration_owners"] = map[string]string{"0": "0"}
		}
		if msg != nil {
			p["message"] = msg
		}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		s.mu.Unlock()
		s.tb.Fatalf("discordtest: encode interaction: %v", err)
	}
	st.payload = raw
	s.interactions[st.token] = st
	url := s.ixURL
	if url == "" {
		s.dispatchLocked("INTERACTION_CREATE", 0, func(int) (any, bool) { return json.RawMessage(raw), true })
	}
	s.touchLocked()
	s.mu.Unlock()
	ix := &Interaction{ID: st.id, Token: st.token, s: s}
	if url != "" {
		status, body := s.deliver(url, raw)
		s.mu.Lock()
		st.status, st.body = status, body
		s.touchLocked()
		s.mu.Unlock()
	}
	return ix
}

// deliver POSTs a signed interaction, as Discord does to an interactions
// endpoint URL.
func (s *Server) deliver(url string, body []byte) (int, []byte) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		s.tb.Fatalf("discordtest: deliver: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Discord-Interactions/1.0 (+https://discord.com)")
	req.Header.Set("X-Signature-Timestamp", ts)
	req.Header.Set("X-Signature-Ed25519", s.Sign(ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.tb.Errorf("discordtest: deliver interaction: %v", err)
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

var errUnknownInteraction = &apiError{Code: 10062, Message: "Unknown interaction"}

// callback is the interaction's initial response.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Type int          `json:"type"`
		Data messageWrite `json:"data"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.interactions[r.PathValue("token")]
	switch {
	case !ok || st.id != r.PathValue("id"):
		writeErr(w, http.StatusNotFound, errUnknownInteraction)
		return
	case st.callback != 0:
		writeErr(w, http.StatusBadRequest, &apiError{Code: 40060, Message: "Interaction has already been acknowledged."})
		return
	case time.Since(st.created) > s.ackDeadline:
		writeErr(w, http.StatusNotFound, errUnknownInteraction) // the token expired unanswered
		return
	}
	component := st.typ == InteractionComponent || st.typ == InteractionModalSubmit
	switch body.Type {
	case CallbackChannelMessage, CallbackDeferredChannelMessage:
		if body.Type == CallbackChannelMessage {
			if e := validateMessage(&body.Data, false); e != nil {
				writeErr(w, http.StatusBadRequest, e)
				return
			}
		}
		flags := 0
		if body.Data.Flags != nil {
			flags = *body.Data.Flags
		}
		if flags&^(FlagEphemeral|FlagSuppressEmbeds|1<<12) != 0 {
			writeErr(w, http.StatusBadRequest, invalidForm("data.flags: only EPHEMERAL, SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS may be set"))
			return
		}
		c := s.channels[st.channelID]
		m := s.botMessageLocked(c)
		m.Flags = flags & FlagEphemeral
		m.ApplicationID, m.WebhookID = s.AppID, s.AppID
		m.InteractionMetadata = &InteractionMetadata{ID: st.id, Type: st.typ, User: st.user}
		if st.typ == InteractionCommand {
			m.Type = MessageChatInputCommand
		}
		if body.Type == CallbackDeferredChannelMessage {
			m.Flags |= FlagLoading
		} else {
			_ = s.applyLocked(m, &body.Data, true)
		}
		s.storeLocked(m)
		st.original = m.ID
		if m.Flags&FlagEphemeral == 0 && body.Type == CallbackChannelMessage {
			s.dispatchMessageLocked("MESSAGE_CREATE", m)
		}
	case CallbackDeferredUpdate:
		if !component {
			writeErr(w, http.StatusBadRequest, invalidForm("type: DEFERRED_UPDATE_MESSAGE is only valid for component-based interactions"))
			return
		}
	case CallbackUpdateMessage:
		if !component {
			writeErr(w, http.StatusBadRequest, invalidForm("type: UPDATE_MESSAGE is only valid for component-based interactions"))
			return
		}
		var clicked struct {
			Message *Message `json:"message"`
		}
		_ = json.Unmarshal(st.payload, &clicked)
		if clicked.Message == nil {
			writeErr(w, http.StatusBadRequest, invalidForm("type: no message to update"))
			return
		}
		m, ok := s.messages[clicked.Message.ID]
		if !ok {
			writeErr(w, http.StatusNotFound, errUnknownMessage)
			return
		}
		if e := s.editLocked(m, &body.Data); e != nil {
			writeErr(w, http.StatusBadRequest, e)
			return
		}
	case CallbackModal:
		if st.typ == InteractionModalSubmit || st.typ == InteractionPing {
			writeErr(w, http.StatusBadRequest, invalidForm("type: a modal cannot answer this interaction"))
			return
		}
		if e := validateModal(&body.Data); e != nil {
			writeErr(w, http.StatusBadRequest, e)
			return
		}
		st.modal = &Modal{CustomID: body.Data.CustomID, Title: body.Data.Title, Components: *body.Data.Components}
	default:
		writeErr(w, http.StatusBadRequest, invalidForm("type: invalid interaction callback type %d", body.Type))
		return
	}
	st.callback = body.Type
	s.touchLocked()
	w.WriteHeader(http.StatusNoContent)
}

// webhookLocked finds the interaction behind a webhook URL.
func (s *Server) webhookLocked(w http.ResponseWriter, r *http.Request) (*interactionState, bool) {
	st, ok := s.interactions[r.PathValue("token")]
	if !ok || r.PathValue("app") != s.AppID || time.Since(st.created) > 15*time.Minute {
		writeErr(w, http.StatusNotFound, &apiError{Code: 10015, Message: "Unknown Webhook"})
		return nil, false
	}
	return st, true
}

// webhookMessageLocked finds "@original" or a follow-up by ID.
func (s *Server) webhookMessageLocked(w http.ResponseWriter, r *http.Request, st *interactionState) (*Message, bool) {
	id := r.PathValue("message")
	if id == "@original" {
		id = st.original
	} else if !slices.Contains(st.followups, id) {
		id = ""
	}
	m, ok := s.messages[id]
	if !ok {
		writeErr(w, http.StatusNotFound, errUnknownMessage)
		return nil, false
	}
	return m, true
}

// webhookMessage runs fn, under the lock, on the message a webhook URL
// names: "@original" or a follow-up.
func (s *Server) webhookMessage(w http.ResponseWriter, r *http.Request, fn func(m *Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.webhookLocked(w, r); ok {
		if m, ok := s.webhookMessageLocked(w, r, st); ok {
			fn(m)
		}
	}
}

func (s *Server) getWebhookMessage(w http.ResponseWriter, r *http.Request) {
	s.webhookMessage(w, r, func(m *Message) { writeJSON(w, http.StatusOK, m) })
}

func (s *Server) editWebhookMessage(w http.ResponseWriter, r *http.Request) {
	var body messageWrite
	if !decode(w, r, &body) {
		return
	}
	s.webhookMessage(w, r, func(m *Message) {
		if e := s.editLocked(m, &body); e != nil {
			writeErr(w, http.StatusBadRequest, e)
			return
		}
		writeJSON(w, http.StatusOK, m)
	})
}

func (s *Server) deleteWebhookMessage(w http.ResponseWriter, r *http.Request) {
	s.webhookMessage(w, r, func(m *Message) {
		delete(s.messages, m.ID)
		s.touchLocked()
		w.WriteHeader(http.StatusNoContent)
	})
}

// followup is "create followup message". Right after a deferred channel
// message response it edits the loading message instead (Discord's
// documented, deprecated behaviour).
func (s *Server) followup(w http.ResponseWriter, r *http.Request) {
	var body messageWrite
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.webhookLocked(w, r)
	if !ok {
		return
	}
	if st.callback == 0 {
		writeErr(w, http.StatusBadRequest, &apiError{Code: 40060, Message: "Interaction has not been acknowledged."})
		return
	}
	if e := validateMessage(&body, false); e != nil {
		writeErr(w, http.StatusBadRequest, e)
		return
	}
	if orig, ok := s.messages[st.original]; ok && orig.Flags&FlagLoading != 0 && len(st.followups) == 0 {
		body.Flags = nil
		if e := s.editLocked(orig, &body); e != nil {
			writeErr(w, http.StatusBadRequest, e)
			return
		}
		writeJSON(w, http.StatusOK, orig)
		return
	}
	flags := 0
	if body.Flags != nil {
		flags = *body.Flags
	}
	if flags&^(FlagEphemeral|FlagSuppressEmbeds|1<<12) != 0 {
		writeErr(w, http.StatusBadRequest, invalidForm("flags: only EPHEMERAL, SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS may be set"))
		return
	}
	c := s.channels[st.channelID]
	m := s.botMessageLocked(c)
	m.Flags = flags & FlagEphemeral
	m.ApplicationID, m.WebhookID = s.AppID, s.AppID
	m.InteractionMetadata = &InteractionMetadata{ID: st.id, Type: st.typ, User: st.user}
	_ = s.applyLocked(m, &body, true)
	s.storeLocked(m)
	st.followups = append(st.followups, m.ID)
	if m.Flags&FlagEphemeral == 0 {
		s.dispatchMessageLocked("MESSAGE_CREATE", m)
	}
	s.touchLocked()
	writeJSON(w, http.StatusOK, m)
}
