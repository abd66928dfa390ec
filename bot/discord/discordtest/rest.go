package discordtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", s.serveGateway)
	api := func(pattern string, bot bool, h http.HandlerFunc) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" "+apiBase+path, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.Header.Get("User-Agent"), "DiscordBot") {
				writeErr(w, http.StatusBadRequest, &apiError{Message: "a User-Agent of the form DiscordBot ($url, $version) is required"})
				return
			}
			if bot && r.Header.Get("Authorization") != "Bot "+s.Token {
				writeErr(w, http.StatusUnauthorized, &apiError{Code: 0, Message: "401: Unauthorized"})
				return
			}
			s.mu.Lock()
			after, limited := s.limited[pattern]
			delete(s.limited, pattern)
			s.mu.Unlock()
			if limited {
				// Discord's 429: the wait in seconds in the body and in
				// Retry-After.
				w.Header().Set("Retry-After", strconv.FormatFloat(after.Seconds(), 'f', -1, 64))
				writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.",
					"retry_after": after.Seconds(), "global": false})
				return
			}
			h(w, r)
		})
	}
	api("GET /gateway", false, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"url": s.gatewayURL()})
	})
	api("GET /gateway/bot", true, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"url": s.gatewayURL(), "shards": 1,
			"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}})
	})
	api("GET /channels/{channel}", true, s.getChannel)
	api("PATCH /channels/{channel}", true, s.editChannel)
	api("POST /channels/{channel}/messages", true, s.createMessage)
	api("GET /channels/{channel}/messages/{message}", true, s.getMessage)
	api("PATCH /channels/{channel}/messages/{message}", true, s.editMessage)
	api("POST /channels/{channel}/messages/{message}/threads", true, s.startThread)
	api("POST /channels/{channel}/typing", true, s.typing)
	api("PUT /applications/{app}/commands", true, s.putCommands)
	api("GET /applications/{app}/commands", true, s.getCommands)
	api("POST /interactions/{id}/{token}/callback", false, s.callback)
	api("POST /webhooks/{app}/{token}", false, s.followup)
	api("GET /webhooks/{app}/{token}/messages/{message}", false, s.getWebhookMessage)
	api("PATCH /webhooks/{app}/{token}/messages/{message}", false, s.editWebhookMessage)
	api("DELETE /webhooks/{app}/{token}/messages/{message}", false, s.deleteWebhookMessage)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, &apiError{Message: "404: Not Found"})
	})
}

// RateLimitNext refuses the next request to route ("GET /gateway/bot") with
// 429, asking the client to wait after (in the body's retry_after and in
// Retry-After), as Discord does.
func (s *Server) RateLimitNext(route string, after time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited[route] = after
}

// record keeps every REST request with its status.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rw, r)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, apiBase),
			Body: body, Status: rw.status})
		s.touchLocked()
		s.mu.Unlock()
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

var (
	errUnknownChannel = &apiError{Code: 10003, Message: "Unknown Channel"}
	errUnknownMessage = &apiError{Code: 10008, Message: "Unknown Message"}
)

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeErr(w, http.StatusBadRequest, &apiError{Code: 50109, Message: "The request body contains invalid JSON."})
		return false
	}
	return true
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[r.PathValue("channel")]
	if !ok {
		writeErr(w, http.StatusNotFound, errUnknownChannel)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// channelEdit is the part of PATCH /channels/{id} the server takes: a
// forum's tags, a post's applied tags.
type channelEdit struct {
	AvailableTags *[]ForumTag `json:"available_tags"`
	AppliedTags   *[]string   `json:"applied_tags"`
}

// editChannel edits a forum's available tags (20 at most, names unique
// and 1-20 characters; refused without Manage Channels, see
// DenyManageChannels) or a post's applied tags (5 at most, each one of
// its forum's), and tells the sessions (CHANNEL_UPDATE, THREAD_UPDATE).
func (s *Server) editChannel(w http.ResponseWriter, r *http.Request) {
	var body channelEdit
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[r.PathValue("channel")]
	if !ok {
		writeErr(w, http.StatusNotFound, errUnknownChannel)
		return
	}
	invalid := func(msg string) {
		writeErr(w, http.StatusBadRequest, &apiError{Code: 50035, Message: "Invalid Form Body: " + msg})
	}
	if body.AvailableTags != nil {
		switch {
		case c.Type != ChannelForum:
			invalid("available_tags: only a forum has tags")
			return
		case s.denyManage:
			writeErr(w, http.StatusForbidden, &apiError{Code: 50013, Message: "Missing Permissions"})
			return
		case len(*body.AvailableTags) > 20:
			invalid("available_tags: at most 20")
			return
		}
		seen := map[string]bool{}
		tags := slices.Clone(*body.AvailableTags)
		for i := range tags {
			if n := len([]rune(tags[i].Name)); n == 0 || n > 20 || seen[tags[i].Name] {
				invalid("available_tags: names must be unique, 1-20 characters")
				return
			}
			seen[tags[i].Name] = true
			if tags[i].ID == "" {
				tags[i].ID = s.newID()
			}
		}
		c.AvailableTags = tags
		s.dispatchLocked("CHANNEL_UPDATE", IntentGuilds, func(int) (any, bool) { return c, true })
	}
	if body.AppliedTags != nil {
		parent, ok := s.channels[c.ParentID]
		if !c.IsThread() || !ok || parent.Type != ChannelForum {
			invalid("applied_tags: only a forum post has tags")
			return
		}
		if len(*body.AppliedTags) > 5 {
			invalid("applied_tags: at most 5")
			return
		}
		for _, id := range *body.AppliedTags {
			if !slices.ContainsFunc(parent.AvailableTags, func(t ForumTag) bool { return t.ID == id }) {
				invalid("applied_tags: unknown tag " + id)
				return
			}
		}
		c.AppliedTags = slices.Clone(*body.AppliedTags)
		s.dispatchLocked("THREAD_UPDATE", IntentGuilds, func(int) (any, bool) { return c, true })
	}
	s.touchLocked()
	writeJSON(w, http.StatusOK, c)
}

// postable returns the channel a message may be sent to, or the error.
func (s *Server) postableLocked(id string) (*Channel, int, *apiError) {
	c, ok := s.channels[id]
	if !ok {
		return nil, http.StatusNotFound, errUnknownChannel
	}
	if c.Type == ChannelForum {
		return nil, http.StatusBadRequest, &apiError{Code: 50008, Message: "Cannot send messages in a non-text channel"}
	}
	if c.ThreadMetadata != nil && c.ThreadMetadata.Locked {
		return nil, http.StatusForbidden, &apiError{Code: 50083, Message: "Thread is archived"}
	}
	if c.ThreadMetadata != nil {
		c.ThreadMetadata.Archived = false // sending unarchives
	}
	return c, 0, nil
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request) {
	var body messageWrite
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, status, e := s.postableLocked(r.PathValue("channel"))
	if e != nil {
		writeErr(w, status, e)
		return
	}
	if e := validateMessage(&body, false); e != nil {
		writeErr(w, http.StatusBadRequest, e)
		return
	}
	if body.Flags != nil && *body.Flags&^(FlagSuppressEmbeds|1<<12) != 0 {
		writeErr(w, http.StatusBadRequest, invalidForm("flags: only SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS may be set"))
		return
	}
	m := s.botMessageLocked(c)
	if ref := body.MessageReference; ref != nil && ref.MessageID != "" {
		orig, ok := s.messages[ref.MessageID]
		if !ok || orig.ChannelID != c.ID {
			if ref.FailIfNotExists == nil || *ref.FailIfNotExists {
				writeErr(w, http.StatusBadRequest, invalidForm("message_reference: Unknown message"))
				return
			}
		} else {
			m.Type = MessageReply
			m.MessageReference = &MessageReference{MessageID: orig.ID, ChannelID: c.ID, GuildID: c.GuildID}
			cp := *orig
			m.ReferencedMessage = &cp
		}
	}
	if e := s.applyLocked(m, &body, true); e != nil {
		writeErr(w, http.StatusBadRequest, e)
		return
	}
	s.storeLocked(m)
	s.dispatchMessageLocked("MESSAGE_CREATE", m)
	s.touchLocked()
	writeJSON(w, http.StatusOK, m)
}

// botMessageLocked is a new, empty message by the bot in c.
func (s *Server) botMessageLocked(c *Channel) *Message {
	m := &Message{ID: s.newID(), ChannelID: c.ID, GuildID: c.GuildID, Author: s.Bot, Timestamp: now(),
		Mentions: []User{}, MentionRoles: []string{}, Embeds: []Embed{}, Components: []Component{},
		Attachments: []json.RawMessage{}}
	if c.GuildID != "" {
		m.Member = &Member{Roles: []string{}, JoinedAt: now()}
	}
	return m
}

// applyLocked writes body's fields into m; created decides whether the
// mentions notify (only a new message pings).
func (s *Server) applyLocked(m *Message, body *messageWrite, created bool) *apiError {
	if !created {
		m.History = append(m.History, m.Content)
		m.Edits++
		t := now()
		m.EditedTimestamp = &t
	}
	if body.Content != nil {
		m.Content = *body.Content
	}
	if body.Embeds != nil {
		m.Embeds = slices.Clone(*body.Embeds)
		for i := range m.Embeds {
			m.Embeds[i].Type = "rich"
		}
	}
	if body.Components != nil {
		m.Components = slices.Clone(*body.Components)
	}
	m.TTS = body.TTS
	roles, users, everyone := mentions(m.Content, body.AllowedMentions)
	m.MentionRoles, m.MentionEveryone = roles, everyone
	m.Mentions = []User{}
	for _, u := range users {
		m.Mentions = append(m.Mentions, User{ID: u, Username: "user" + u, Discriminator: "0"})
	}
	if created {
		s.pings[m.ID] = append(slices.Clone(roles), users...)
		if everyone {
			s.pings[m.ID] = append(s.pings[m.ID], "@everyone")
		}
	}
	return nil
}

// mentions returns who content pings under allowed_mentions (nil: the
// default, everything in the content).
func mentions(content string, am *AllowedMentions) (roles, users []string, everyone bool) {
	roles, users = []string{}, []string{}
	allow := func(kind string, id string, list []string) bool {
		if am == nil {
			return true
		}
		return slices.Contains(am.Parse, kind) || slices.Contains(list, id)
	}
	for _, sub := range roleMention.FindAllStringSubmatch(content, -1) {
		if id := sub[1]; allow("roles", id, rolesOf(am)) && !slices.Contains(roles, id) {
			roles = append(roles, id)
		}
	}
	for _, sub := range userMention.FindAllStringSubmatch(content, -1) {
		if id := sub[1]; allow("users", id, usersOf(am)) && !slices.Contains(users, id) {
			users = append(users, id)
		}
	}
	everyone = (strings.Contains(content, "@everyone") || strings.Contains(content, "@here")) &&
		(am == nil || slices.Contains(am.Parse, "everyone"))
	return roles, users, everyone
}

func rolesOf(am *AllowedMentions) []string {
	if am == nil {
		return nil
	}
	return am.Roles
}

func usersOf(am *AllowedMentions) []string {
	if am == nil {
		return nil
	}
	return am.Users
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") || m.Flags&FlagEphemeral != 0 {
		writeErr(w, http.StatusNotFound, errUnknownMessage)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) {
	var body messageWrite
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") || m.Flags&FlagEphemeral != 0 {
		writeErr(w, http.StatusNotFound, errUnknownMessage)
		return
	}
	if m.Author.ID != s.Bot.ID {
		writeErr(w, http.StatusForbidden, &apiError{Code: 50005, Message: "Cannot edit a message authored by another user"})
		return
	}
	if e := s.editLocked(m, &body); e != nil {
		writeErr(w, http.StatusBadRequest, e)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// editLocked validates and applies an edit and tells the sessions.
func (s *Server) editLocked(m *Message, body *messageWrite) *apiError {
	merged := messageWrite{Content: body.Content, Embeds: body.Embeds, Components: body.Components, AllowedMentions: body.AllowedMentions}
	if merged.Content == nil {
		merged.Content = &m.Content
	}
	if merged.Embeds == nil {
		merged.Embeds = &m.Embeds
	}
	if merged.Components == nil {
		merged.Components = &m.Components
	}
	if e := validateMessage(&merged, true); e != nil {
		return e
	}
	if *merged.Content == "" && len(*merged.Embeds) == 0 && len(*merged.Components) == 0 {
		return &apiError{Code: 50006, Message: "Cannot send an empty message"}
	}
	_ = s.applyLocked(m, body, false)
	m.Flags &^= FlagLoading
	if m.Flags&FlagEphemeral == 0 {
		s.dispatchMessageLocked("MESSAGE_UPDATE", m)
	}
	s.touchLocked()
	return nil
}

func (s *Server) startThread(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name                string `json:"name"`
		AutoArchiveDuration int    `json:"auto_archive_duration"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, ok := s.channels[r.PathValue("channel")]
	if !ok {
		writeErr(w, http.StatusNotFound, errUnknownChannel)
		return
	}
	m, ok := s.messages[r.PathValue("message")]
	if !ok || m.ChannelID != parent.ID {
		writeErr(w, http.StatusNotFound, errUnknownMessage)
		return
	}
	switch {
	case parent.Type != ChannelText:
		writeErr(w, http.StatusBadRequest, &apiError{Code: 50024, Message: "Cannot execute action on this channel type"})
		return
	case body.Name == "" || Length(body.Name) > MaxThreadName:
		writeErr(w, http.StatusBadRequest, invalidForm("name: must be between 1 and %d in length", MaxThreadName))
		return
	case body.AutoArchiveDuration != 0 && !slices.Contains([]int{60, 1440, 4320, 10080}, body.AutoArchiveDuration):
		writeErr(w, http.StatusBadRequest, invalidForm("auto_archive_duration: must be one of 60, 1440, 4320, 10080"))
		return
	}
	if _, exists := s.channels[m.ID]; exists {
		writeErr(w, http.StatusBadRequest, &apiError{Code: 160004, Message: "A thread has already been created for this message"})
		return
	}
	if body.AutoArchiveDuration == 0 {
		body.AutoArchiveDuration = 4320
	}
	th := &Channel{ID: m.ID, Type: ChannelPublicThrd, GuildID: parent.GuildID, Name: body.Name, ParentID: parent.ID,
		OwnerID: s.Bot.ID, ThreadMetadata: &ThreadMetadata{AutoArchiveDuration: body.AutoArchiveDuration, ArchiveTimestamp: now()}}
	s.channels[th.ID] = th
	s.chanOrder = append(s.chanOrder, th.ID)
	cp := *th
	m.Thread = &cp
	s.dispatchLocked("THREAD_CREATE", IntentGuilds, func(int) (any, bool) {
		return struct {
			*Channel
			NewlyCreated bool `json:"newly_created"`
		}{th, true}, true
	})
	s.touchLocked()
	writeJSON(w, http.StatusCreated, th)
}

func (s *Server) typing(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, status, e := s.postableLocked(r.PathValue("channel")); e != nil {
		writeErr(w, status, e)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request) {
	var cmds []Command
	if !decode(w, r, &cmds) {
		return
	}
	if r.PathValue("app") != s.AppID {
		writeErr(w, http.StatusForbidden, &apiError{Code: 20012, Message: "You are not authorized to perform this action on this application"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range cmds {
		if e := validateCommand(cmds[i]); e != nil {
			writeErr(w, http.StatusBadRequest, e)
			return
		}
		cmds[i].ID, cmds[i].ApplicationID, cmds[i].Version = s.newID(), s.AppID, s.newID()
		if cmds[i].Type == 0 {
			cmds[i].Type = 1
		}
	}
	s.commands = cmds
	s.touchLocked()
	writeJSON(w, http.StatusOK, cmds)
}

func (s *Server) getCommands(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, append([]Command{}, s.commands...))
}
