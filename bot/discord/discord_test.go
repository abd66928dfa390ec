package discord_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/bot/discord/discordtest"
	"github.com/docent-hq/docent/store"
)

var ctx = context.Background()

// pipeline is a scripted answer pipeline (the inner layer; Discord itself
// is the local server): it records the questions and answers as told.
type pipeline struct {
	mu     sync.Mutex
	asks   []docent.Question
	status docent.Status
	err    error
	text   string
	cites  []docent.Citation
	deltas []string
}

func (p *pipeline) Answer(_ context.Context, q docent.Question) (docent.Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asks = append(p.asks, q)
	if p.err != nil {
		return docent.Answer{Status: docent.StatusError}, p.err
	}
	a := docent.Answer{Status: p.status, Text: p.text, Citations: p.cites}
	if a.Text == "" {
		a.Text = "Open the VPN portal and choose Reset token [1]. The new token works at once [2]."
	}
	if a.Citations == nil {
		a.Citations = vpnCitations
	}
	if p.status == docent.StatusNotFound {
		a.Text, a.Citations = answer.NotFoundText, nil
	}
	return a, nil
}

func (p *pipeline) questions() []docent.Question {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asks)
}

var vpnCitations = []docent.Citation{
	{N: 1, DocID: "handbook:it/vpn.md", Title: "VPN", Section: "Resetting your token", URL: "https://docs.example.com/it/vpn#reset",
		UpdatedAt: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)},
	{N: 2, DocID: "handbook:it/security.md", Title: "Security basics", URL: "https://docs.example.com/it/security",
		UpdatedAt: time.Date(2024, 11, 2, 9, 0, 0, 0, time.UTC)},
}

// streamAsker is a scripted streaming model in front of the Recorder.
type streamAsker struct {
	*answer.Recorder
	p *pipeline
}

func (s streamAsker) AskStream(ctx context.Context, q docent.Question, onDelta func(string)) (docent.Turn, error) {
	s.p.mu.Lock()
	deltas := slices.Clone(s.p.deltas)
	s.p.mu.Unlock()
	for _, d := range deltas {
		onDelta(d)
		time.Sleep(15 * time.Millisecond)
	}
	return s.Ask(ctx, q)
}

// env is the adapter over a real store, the real Recorder and a scripted
// pipeline, connected through a real discordgo session to a local
// Discord with a help channel, a general channel, a help forum and a
// staff channel.
type env struct {
	srv                         *discordtest.Server
	db                          *store.DB
	pipe                        *pipeline
	client                      *discord.Client
	help, general, forum, staff discordtest.Channel
	role                        string
	alice, bob                  discordtest.User
	cfg                         discord.Config
	dbPath                      string
	stale                       bot.StaleChecker
	streaming                   bool
	userRate                    float64
	// configure changes the adapter's config once the channels exist.
	configure []func(*env, *discord.Config)
}

type option func(*env)

func withConfig(f func(*env, *discord.Config)) option {
	return func(e *env) { e.configure = append(e.configure, f) }
}
func withStreaming() option                   { return func(e *env) { e.streaming = true } }
func withStale(s bot.StaleChecker) option     { return func(e *env) { e.stale = s } }
func withDB(path string) option               { return func(e *env) { e.dbPath = path } }
func withServer(s *discordtest.Server) option { return func(e *env) { e.srv = s } }

// newEnv runs the test in parallel with the others: each has its own
// local Discord, and closing a discordgo session takes a second
// (discordgo waits that long for the server to close the socket).
func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	parallel(t)
	e := &env{pipe: &pipeline{status: docent.StatusAnswered}, dbPath: filepath.Join(t.TempDir(), "docent.db")}
	for _, o := range opts {
		o(e)
	}
	if e.srv == nil {
		e.srv = discordtest.NewServer(t)
		e.help = e.srv.AddChannel("help", discordtest.ChannelText)
		e.general = e.srv.AddChannel("general", discordtest.ChannelText)
		e.forum = e.srv.AddChannel("help-forum", discordtest.ChannelForum)
		e.staff = e.srv.AddChannel("staff", discordtest.ChannelText)
		e.role = e.srv.AddRole("docs-team")
	}
	e.alice, e.bob = e.srv.AddUser("alice"), e.srv.AddUser("bob")
	db, err := store.Open(ctx, e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	rec := answer.NewRecorder(e.pipe, db, nil, slog.New(slog.DiscardHandler), nil)
	var asker bot.Asker = rec
	if e.streaming {
		asker = streamAsker{rec, e.pipe}
	}
	core := bot.New(discord.Platform, asker, db, e.stale, bot.Config{
		Channels: map[string]bot.ChannelConfig{
			e.help.ID:  {AutoAnswer: true},
			e.forum.ID: {AutoAnswer: true},
		},
		GroupName: "the docs team",
		UserRate:  e.userRate,
	}, nil)
	e.cfg = discord.Config{Token: e.srv.Token, APIURL: e.srv.URL, EscalationChannel: e.staff.ID,
		EscalationRole: e.role, StreamInterval: 20 * time.Millisecond}
	for _, f := range e.configure {
		f(e, &e.cfg)
	}
	e.client, err = discord.NewClient(e.cfg, core, slog.New(slog.NewTextHandler(newTestWriter(t), nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.client.Close(ctx) })
	e.srv.WaitReady(t)
	return e
}

// parallelTests are the tests that called t.Parallel (a test may build
// several envs).
var parallelTests sync.Map

func parallel(t *testing.T) {
	if _, done := parallelTests.LoadOrStore(t, true); !done {
		t.Parallel()
	}
}

// testWriter sends logs to the test log, until the test ends (discordgo's
// own logs go to the last client's logger, which may be a test that has
// finished while others run).
type testWriter struct {
	t    *testing.T
	done *atomic.Bool
}

func newTestWriter(t *testing.T) testWriter {
	w := testWriter{t, &atomic.Bool{}}
	t.Cleanup(func() { w.done.Store(true) })
	return w
}

func (w testWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// botReply waits for the bot's n-th message in a channel and returns it.
func (e *env) botReply(t *testing.T, channelID string, n int) discordtest.Message {
	t.Helper()
	var got []discordtest.Message
	e.srv.WaitFor(t, "bot message "+strconv.Itoa(n)+" in "+channelID, func() bool {
		got = e.srv.BotMessages(channelID)
		return len(got) >= n && got[n-1].Flags&discordtest.FlagLoading == 0
	})
	return got[n-1]
}

// quiet asserts that the bot posted nothing more in a channel: once the
// client has handled every event sent to it and finished the work they
// gave it.
func (e *env) quiet(t *testing.T, channelID string, have int) {
	t.Helper()
	e.srv.Flush(t)
	e.client.WaitIdle()
	if n := len(e.srv.BotMessages(channelID)); n != have {
		t.Errorf("bot posted %d messages in %s, want %d: %+v", n, channelID, have, e.srv.BotMessages(channelID))
	}
}

func buttonIDs(m discordtest.Message) []string {
	var ids []string
	for _, b := range discordtest.Buttons(m.Components) {
		ids = append(ids, b.CustomID)
	}
	return ids
}

func buttonLabels(m discordtest.Message) []string {
	var out []string
	for _, b := range discordtest.Buttons(m.Components) {
		out = append(out, b.Label)
	}
	return out
}

// button returns the custom ID of the button labelled label.
func button(t *testing.T, m discordtest.Message, label string) string {
	t.Helper()
	for _, b := range discordtest.Buttons(m.Components) {
		if b.Label == label {
			return b.CustomID
		}
	}
	t.Fatalf("message %s has no %q button (has %q)", m.ID, label, buttonLabels(m))
	return ""
}

// checkAnswer checks an answer message: linked citations, the sources
// embed (title, section, updated, link) and the three buttons.
func checkAnswer(t *testing.T, m discordtest.Message) {
	t.Helper()
	if !strings.Contains(m.Content, `[\[1\]](<https://docs.example.com/it/vpn#reset>)`) ||
		!strings.Contains(m.Content, `[\[2\]](<https://docs.example.com/it/security>)`) {
		t.Errorf("content %q: want [n] rendered as links to the sources", m.Content)
	}
	if len(m.Embeds) != 1 {
		t.Fatalf("embeds = %+v, want one listing the sources", m.Embeds)
	}
	d := m.Embeds[0].Description
	for _, want := range []string{"`[1]` [VPN › Resetting your token](https://docs.example.com/it/vpn#reset) · updated 14 Mar 2025",
		"`[2]` [Security basics](https://docs.example.com/it/security) · updated 2 Nov 2024"} {
		if !strings.Contains(d, want) {
			t.Errorf("sources embed %q lacks %q", d, want)
		}
	}
	if got := buttonLabels(m); !slices.Equal(got, []string{"Helpful", "Not helpful", "Get a human"}) {
		t.Errorf("buttons = %q, want Helpful, Not helpful, Get a human", got)
	}
	if len(m.MentionRoles) != 0 || m.MentionEveryone {
		t.Errorf("an answer pinged %v (everyone %v)", m.MentionRoles, m.MentionEveryone)
	}
}

func TestMentionInHelpChannelStartsThreadAndAnswers(t *testing.T) {
	e := newEnv(t)
	id := e.srv.Identifies()
	if len(id) != 1 || id[0].Intents != int(discord.Intents) || id[0].Token != "Bot "+e.srv.Token {
		t.Errorf("identify = %+v, want the bot token and intents %d", id, discord.Intents)
	}
	if want := discordtest.IntentGuilds | discordtest.IntentGuildMessages | discordtest.IntentDirectMessages |
		discordtest.IntentMessageContent | discordtest.IntentGuildMessageReactions; id[0].Intents != want {
		t.Errorf("intents = %b, want guilds, guild messages, direct messages, message content and reactions (%b)", id[0].Intents, want)
	}
	if cmds := e.srv.Commands(); len(cmds) != 1 || cmds[0].Name != "ask" || len(cmds[0].Options) != 1 ||
		cmds[0].Options[0].Name != "question" || !cmds[0].Options[0].Required {
		t.Errorf("commands = %+v, want /ask with a required question", cmds)
	}
	// Open asks for the gateway URL without discordgo's own rate-limit
	// sleep (so a 429 reaches Run's backoff), then discordgo asks again.
	if gw := e.srv.RequestsTo("GET /gateway/bot"); len(gw) != 2 || gw[0].Status != 200 || gw[1].Status != 200 {
		t.Errorf("gateway URL requests = %+v, want Open's and discordgo's GET /gateway/bot", gw)
	}

	q := e.srv.Post(e.help.ID, e.alice, e.srv.Bot.Mention()+" How do I reset my VPN token?")
	th, ok := e.srv.Channel(q.ID)
	e.srv.WaitFor(t, "a thread from the question", func() bool { th, ok = e.srv.Channel(q.ID); return ok })
	if th.ParentID != e.help.ID || th.Type != discordtest.ChannelPublicThrd || th.Name != "How do I reset my VPN token?" {
		t.Errorf("thread = %+v, want a public thread in #help named after the question", th)
	}
	m := e.botReply(t, th.ID, 1)
	checkAnswer(t, m)
	if n := len(e.srv.BotMessages(e.help.ID)); n != 0 {
		t.Errorf("bot posted %d messages in the channel itself, want the answer in the thread only", n)
	}
	qs := e.pipe.questions()
	if len(qs) != 1 || qs[0].Text != "How do I reset my VPN token?" || qs[0].Platform != "discord" ||
		qs[0].Channel != e.help.ID || qs[0].Thread != q.ID || qs[0].User != e.alice.ID {
		t.Errorf("asked %+v, want the question without the mention, in #help, thread %s, by alice", qs, q.ID)
	}
	if typing := e.srv.RequestsTo("POST /channels/" + th.ID + "/typing"); len(typing) == 0 {
		t.Errorf("no typing indicator in the thread while answering")
	}
	// The bot's own messages come back over the gateway: never answered.
	e.quiet(t, th.ID, 1)
}

func TestWhichMessagesAreAnswered(t *testing.T) {
	e := newEnv(t)
	e.srv.Post(e.general.ID, e.alice, "how do I reset my VPN token?") // no mention, not a help channel
	e.srv.Post(e.help.ID, e.alice, "thanks all, sorted now")          // help channel, not a question
	q := e.srv.Post(e.help.ID, e.bob, "where is the expense policy?") // help channel, a question
	m := e.botReply(t, q.ID, 1)
	checkAnswer(t, m)
	dm := e.srv.DM(e.alice)
	e.srv.Post(dm.ID, e.alice, "how do I reset my VPN token?")
	checkAnswer(t, e.botReply(t, dm.ID, 1))
	e.quiet(t, e.general.ID, 0)
	if n := len(e.pipe.questions()); n != 2 {
		t.Errorf("asked %d questions, want 2 (the help-channel question and the DM): %+v", n, e.pipe.questions())
	}
}

func TestForumPostAnsweredInPlace(t *testing.T) {
	e := newEnv(t)
	post, _ := e.srv.ForumPost(e.forum.ID, e.alice, "VPN token", "My token stopped working after the update")
	m := e.botReply(t, post.ID, 1)
	checkAnswer(t, m)
	if starts := e.srv.RequestsTo("POST /channels/*/messages/*/threads"); len(starts) != 0 {
		t.Errorf("started %d threads for a forum post, want the answer in the post itself", len(starts))
	}
	qs := e.pipe.questions()
	if len(qs) != 1 || qs[0].Text != "VPN token\nMy token stopped working after the update" || qs[0].Channel != e.forum.ID || qs[0].Thread != post.ID {
		t.Errorf("asked %+v, want the post's title and body, in the forum's scope", qs)
	}
}

func TestFollowUpInThreadWithoutMention(t *testing.T) {
	e := newEnv(t)
	q := e.srv.Post(e.general.ID, e.alice, e.srv.Bot.Mention()+" How do I reset my VPN token?")
	first := e.botReply(t, q.ID, 1)
	e.srv.Post(q.ID, e.alice, "great, thanks") // a remark: no answer
	e.srv.Post(q.ID, e.alice, "and on a Mac?") // a question: answered without a mention
	e.botReply(t, q.ID, 2)
	e.srv.Post(q.ID, e.bob, "works for me too", discordtest.ReplyTo(first)) // a reply to the bot
	e.botReply(t, q.ID, 3)
	qs := e.pipe.questions()
	if len(qs) != 3 || qs[1].Text != "and on a Mac?" || len(qs[1].History) != 1 ||
		qs[1].History[0].Question != "How do I reset my VPN token?" || qs[2].Text != "works for me too" {
		t.Errorf("asked %+v, want the follow-up with the thread's history, and the reply to the bot", qs)
	}
}

func TestSlashAskDefersAndFollowsUp(t *testing.T) {
	e := newEnv(t)
	ix := e.srv.Command(e.general.ID, e.alice, "ask", map[string]string{"question": "How do I reset my VPN token?"})
	e.srv.WaitFor(t, "the answer in the response", func() bool {
		m, ok := ix.Original()
		return ok && m.Flags&discordtest.FlagLoading == 0
	})
	if got := ix.Callback(); got != discordtest.CallbackDeferredChannelMessage {
		t.Errorf("initial response = %d, want a deferred channel message (5)", got)
	}
	orig, _ := ix.Original()
	checkAnswer(t, orig)
	if orig.Flags&discordtest.FlagEphemeral != 0 || orig.ChannelID != e.general.ID {
		t.Errorf("response = %+v, want it public in #general", orig)
	}
	qs := e.pipe.questions()
	if len(qs) != 1 || qs[0].Text != "How do I reset my VPN token?" || qs[0].Thread != orig.ID {
		t.Fatalf("asked %+v, want the question, with the response message as the conversation's root", qs)
	}
	// A thread started from the response continues the conversation.
	// (A person does that in the client; the follow-up then has history.)
	if starts := e.srv.RequestsTo("POST /channels/*/messages/*/threads"); len(starts) != 0 {
		t.Errorf("/ask started a thread: %+v", starts)
	}

	// In a thread, /ask answers in the thread's conversation.
	q := e.srv.Post(e.general.ID, e.alice, e.srv.Bot.Mention()+" where is the expense policy?")
	e.botReply(t, q.ID, 1)
	ix2 := e.srv.Command(q.ID, e.bob, "ask", map[string]string{"question": "and for contractors?"})
	e.srv.WaitFor(t, "the second answer", func() bool {
		m, ok := ix2.Original()
		return ok && m.Flags&discordtest.FlagLoading == 0
	})
	qs = e.pipe.questions()
	if last := qs[len(qs)-1]; last.Thread != q.ID || len(last.History) != 1 {
		t.Errorf("/ask in a thread asked %+v, want the thread's conversation and history", last)
	}
}

// TestGetHumanPingsRoleAndGoesQuiet: "Get a human" posts to the staff
// channel (link, question, answer, sources, role ping, Claim/Resolve),
// tells the thread with the role pinged, and the bot goes quiet there;
// claim and resolve update the store and the post; the staff reply is
// kept as a knowledge candidate; then the bot answers again.
func TestGetHumanPingsRoleAndGoesQuiet(t *testing.T) {
	e := newEnv(t)
	staffer := e.srv.AddUser("sam")
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	answerMsg := e.botReply(t, q.ID, 1)

	press := e.srv.Click(answerMsg, button(t, answerMsg, "Get a human"), e.alice)
	notice := e.botReply(t, q.ID, 2)
	if press.Callback() != discordtest.CallbackDeferredUpdate {
		t.Errorf("button response = %d, want a deferred update (6)", press.Callback())
	}
	if !strings.Contains(notice.Content, "<@&"+e.role+">") || !slices.Contains(e.srv.Pinged(notice.ID), e.role) ||
		!strings.Contains(notice.Content, "the docs team") {
		t.Errorf("thread notice %q pinged %v, want the role pinged and the asker told", notice.Content, e.srv.Pinged(notice.ID))
	}
	posts := e.srv.BotMessages(e.staff.ID)
	if len(posts) != 1 {
		t.Fatalf("staff channel has %d posts, want 1", len(posts))
	}
	post := posts[0]
	link := "https://discord.com/channels/" + e.srv.GuildID + "/" + q.ID
	if !strings.Contains(post.Content, link) || !slices.Contains(e.srv.Pinged(post.ID), e.role) || len(post.Embeds) != 1 {
		t.Errorf("staff post %q (pinged %v): want the thread link and the role pinged", post.Content, e.srv.Pinged(post.ID))
	}
	em := post.Embeds[0]
	fields := map[string]string{}
	for _, f := range em.Fields {
		fields[f.Name] = f.Value
	}
	if !strings.Contains(em.Description, "How do I reset my VPN token?") || !strings.Contains(em.Description, "Open the VPN portal") ||
		!strings.Contains(fields["Sources"], "VPN › Resetting your token") || fields["Asked by"] != "<@"+e.alice.ID+">" ||
		em.URL != link {
		t.Errorf("staff post embed = %+v, want the question, the answer, its sources, the asker and the link", em)
	}
	if got := buttonLabels(post); !slices.Equal(got, []string{"Claim", "Resolve", "Open thread"}) {
		t.Errorf("staff post buttons = %q", got)
	}
	h, ok, err := e.db.ThreadHandoff(ctx, "discord", e.help.ID, q.ID)
	if err != nil || !ok || h.State != docent.HandoffRequested || h.EscalationRef != e.staff.ID+"/"+post.ID {
		t.Fatalf("handoff = %+v, %v, %v", h, ok, err)
	}

	// Quiet in the thread: neither the asker's question nor the staff reply
	// is answered.
	e.srv.Post(q.ID, e.alice, "any update?")
	e.srv.Post(q.ID, staffer, "Use the self-service portal; I've reset it for you.")
	e.quiet(t, q.ID, 2)

	e.srv.Click(post, button(t, post, "Claim"), staffer)
	e.srv.WaitFor(t, "the claim", func() bool {
		h, _ = e.db.Handoff(ctx, h.ID)
		return h.State == docent.HandoffClaimed
	})
	e.srv.WaitFor(t, "the staff post updated", func() bool {
		m, _ := e.srv.Message(post.ID)
		return m.Edits == 1
	})
	edited, _ := e.srv.Message(post.ID)
	if b := discordtest.Buttons(edited.Components); !b[0].Disabled || b[1].Disabled ||
		!strings.Contains(edited.Embeds[0].Title, "claimed") || !strings.Contains(edited.Embeds[0].Description, "Open the VPN portal") {
		t.Errorf("after claim, post = %+v: want Claim off, Resolve on, the state shown and the answer kept", edited)
	}
	e.srv.Click(edited, button(t, edited, "Resolve"), staffer)
	e.srv.WaitFor(t, "the resolution", func() bool {
		h, _ = e.db.Handoff(ctx, h.ID)
		return h.State == docent.HandoffResolved
	})
	if h.ClaimedBy != staffer.ID || h.ResolvedBy != staffer.ID || h.ClaimedAt.IsZero() || h.ResolvedAt.Before(h.ClaimedAt) {
		t.Errorf("handoff = %+v, want claim and resolve by the staffer, timed", h)
	}
	e.srv.WaitFor(t, "the post resolved", func() bool {
		m, _ := e.srv.Message(post.ID)
		b := discordtest.Buttons(m.Components)
		return m.Edits == 2 && b[0].Disabled && b[1].Disabled
	})
	// The bot stores the candidate after the handoff's state and before it
	// redraws the post, so it is there once the post shows the resolution.
	ks, err := e.db.ListKnowledgeCandidates(ctx, 0)
	if err != nil || len(ks) != 1 || ks[0].Answer != "Use the self-service portal; I've reset it for you." || ks[0].Author != staffer.ID {
		t.Errorf("knowledge candidates = %+v, %v", ks, err)
	}
	// Back to the bot: a note, then answers again.
	e.botReply(t, q.ID, 4)
	e.srv.Post(q.ID, e.alice, "how do I reset my VPN token on a phone?")
	e.botReply(t, q.ID, 5)
}

func TestFeedbackStoredAgainstTheTurn(t *testing.T) {
	e := newEnv(t)
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	m := e.botReply(t, q.ID, 1)
	turn := e.pipe.questions()
	_ = turn

	e.srv.Click(m, button(t, m, "Helpful"), e.alice)
	press := e.srv.Click(m, button(t, m, "Not helpful"), e.bob)
	e.srv.WaitFor(t, "the reason modal", func() bool { return press.Modal() != nil })
	if press.Callback() != discordtest.CallbackModal {
		t.Errorf("Not helpful answered with %d, want a modal (9)", press.Callback())
	}
	submit := e.srv.SubmitModal(press, e.bob, map[string]string{"reason": "It changed in March."})
	e.srv.WaitFor(t, "the thanks", func() bool { return len(submit.Followups()) == 1 })
	thanks := submit.Followups()[0]
	if thanks.Flags&discordtest.FlagEphemeral == 0 || !strings.Contains(thanks.Content, "Thanks") {
		t.Errorf("thanks = %+v, want an ephemeral note", thanks)
	}
	turnID := turnOf(t, m)
	var fb []docent.Feedback
	e.srv.WaitFor(t, "two ratings", func() bool {
		fb, _ = e.db.TurnFeedback(ctx, turnID)
		return len(fb) == 2
	})
	slices.SortFunc(fb, func(a, b docent.Feedback) int { return strings.Compare(string(a.Rating), string(b.Rating)) })
	if fb[0].Rating != docent.RatingHelpful || fb[0].User != e.alice.ID || fb[1].Rating != docent.RatingNotHelpful ||
		fb[1].Reason != "It changed in March." || fb[1].User != e.bob.ID || fb[1].Platform != "discord" {
		t.Errorf("feedback = %+v", fb)
	}
	e.quiet(t, q.ID, 1) // feedback notes are never public
}

// turnOf reads the turn ID from an answer's buttons.
func turnOf(t *testing.T, m discordtest.Message) int64 {
	t.Helper()
	parts := strings.Split(button(t, m, "Helpful"), ":")
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestFailedAnswerApologisesWithHandoffButton(t *testing.T) {
	e := newEnv(t)
	e.pipe.err = &answer.StageError{Stage: "generate", Err: errors.New("model unavailable")}
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	m := e.botReply(t, q.ID, 1)
	if !strings.Contains(m.Content, "Sorry") || !slices.Equal(buttonLabels(m), []string{"Get a human"}) {
		t.Errorf("reply = %q with buttons %q, want an apology and the handoff button", m.Content, buttonLabels(m))
	}
	turn, err := e.db.Turn(ctx, turnOfHandoff(t, m))
	if err != nil || turn.Answer.Status != docent.StatusError || !strings.Contains(turn.Answer.Trace.Error, "model unavailable") {
		t.Errorf("failed turn = %+v, %v: want it stored with its error", turn.Answer, err)
	}
}

func turnOfHandoff(t *testing.T, m discordtest.Message) int64 {
	t.Helper()
	parts := strings.Split(button(t, m, "Get a human"), ":")
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestOutcomeReplies(t *testing.T) {
	e := newEnv(t)
	e.pipe.status = docent.StatusNotFound
	q := e.srv.Post(e.help.ID, e.alice, "Can I bring my dog to the office?")
	m := e.botReply(t, q.ID, 1)
	if got := buttonLabels(m); !slices.Equal(got, []string{"Get a human"}) || len(m.Embeds) != 0 {
		t.Errorf("not found: buttons %q, embeds %d; want the handoff button alone and no sources", got, len(m.Embeds))
	}
	e.pipe.status = docent.StatusUncertain
	e.pipe.text = "I couldn't confirm this; the closest page is [1]."
	q = e.srv.Post(e.help.ID, e.alice, "Is the VPN needed in the lab?")
	m = e.botReply(t, q.ID, 1)
	if got := buttonLabels(m); len(got) == 0 || got[0] != "Get a human" || len(m.Embeds) != 1 || m.Embeds[0].Title != "Closest pages" {
		t.Errorf("uncertain: buttons %q, embeds %+v; want the handoff button first and the closest page", got, m.Embeds)
	}
}

type staleDocs map[string]bool

func (s staleDocs) Stale(context.Context, []string) (map[string]bool, error) { return s, nil }

func TestStaleSourceFlagged(t *testing.T) {
	e := newEnv(t, withStale(staleDocs{"handbook:it/security.md": true}))
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	m := e.botReply(t, q.ID, 1)
	lines := strings.Split(m.Embeds[0].Description, "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "out of date") || !strings.Contains(lines[1], "⚠️ **may be out of date**") {
		t.Errorf("sources = %q, want the stale flag next to source 2 only", lines)
	}
}

func TestLongAnswerSplitWithinLimits(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := range 35 {
		b.WriteString("Step " + strconv.Itoa(i) + ": open the VPN portal, choose Reset token and follow the prompts carefully [1]. ")
		if i%10 == 9 {
			b.WriteString("\n\n")
		}
	}
	e.pipe.text = b.String()
	cites := slices.Clone(vpnCitations)
	for i := 3; i <= 30; i++ {
		cites = append(cites, docent.Citation{N: i, Title: strings.Repeat("Long title ", 20), Section: strings.Repeat("Section ", 20),
			URL: "https://docs.example.com/page/" + strconv.Itoa(i), UpdatedAt: time.Now()})
	}
	e.pipe.cites = cites
	q := e.srv.Post(e.help.ID, e.alice, "Walk me through the VPN token reset in detail?")
	e.srv.WaitFor(t, "the last part", func() bool {
		ms := e.srv.BotMessages(q.ID)
		return len(ms) > 0 && len(ms[len(ms)-1].Components) > 0
	})
	ms := e.srv.BotMessages(q.ID)
	if len(ms) < 3 {
		t.Fatalf("%d messages, want the answer split over several", len(ms))
	}
	var all strings.Builder
	for i, m := range ms {
		if discordtest.Length(m.Content) > discordtest.MaxContent {
			t.Errorf("message %d has %d characters", i, discordtest.Length(m.Content))
		}
		if i < len(ms)-1 && (len(m.Embeds) != 0 || len(m.Components) != 0) {
			t.Errorf("message %d carries sources or buttons; want them on the last only", i)
		}
		all.WriteString(m.Content + " ")
	}
	if n := strings.Count(all.String(), `[\[1\]](<https://docs.example.com/it/vpn#reset>)`); n != 35 {
		t.Errorf("%d intact citation links across the parts, want 35", n)
	}
	if d := ms[len(ms)-1].Embeds[0].Description; discordtest.Length(d) > discordtest.MaxEmbedDescription || !strings.Contains(d, "more") {
		t.Errorf("sources embed of %d characters, want it within the limit with the rest counted", discordtest.Length(d))
	}
	for _, r := range e.srv.Requests() {
		if r.Status >= 400 {
			t.Errorf("%s %s = %d: %s", r.Method, r.Path, r.Status, r.Body)
		}
	}
}

func TestStreamingAnswerEditsOneMessage(t *testing.T) {
	e := newEnv(t, withStreaming())
	e.pipe.deltas = []string{"Open the VPN portal ", "and choose Reset token [1]. ", "The new token works at once [2]."}
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	e.srv.WaitFor(t, "the final answer", func() bool {
		ms := e.srv.BotMessages(q.ID)
		return len(ms) == 1 && len(ms[0].Components) > 0
	})
	m := e.srv.BotMessages(q.ID)[0]
	checkAnswer(t, m)
	if m.Edits < 2 || !slices.ContainsFunc(m.History, func(s string) bool { return strings.HasPrefix(s, "Open the VPN portal") }) {
		t.Errorf("message edited %d times through %q, want the text shown growing, then the answer", m.Edits, m.History)
	}
}

func TestRedeliveredMessageAnsweredOnceAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docent.db")
	e := newEnv(t, withDB(path))
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	e.botReply(t, q.ID, 1)
	e.srv.Redeliver(q)
	e.srv.Disconnect() // the gateway drops; discordgo resumes and gets the events it missed
	e.srv.WaitFor(t, "a resumed session", func() bool { return e.srv.Connected() == 1 })
	e.srv.Redeliver(q)
	e.quiet(t, q.ID, 1)

	// A restarted process (same store) is redelivered the message too.
	e.client.Close(ctx)
	e.db.Close()
	again := newEnv(t, withServer(e.srv), withDB(path), func(n *env) {
		n.help, n.general, n.forum, n.staff, n.role = e.help, e.general, e.forum, e.staff, e.role
		n.pipe = e.pipe
	})
	again.srv.Redeliver(q)
	e.quiet(t, q.ID, 1)
	if n := len(again.pipe.questions()); n != 1 { // the pipeline is shared
		t.Errorf("answered %d times, want once", n)
	}
}

func TestInteractionsOverHTTPVerifiedWithEd25519(t *testing.T) {
	e := newEnv(t, withConfig(func(e *env, c *discord.Config) { c.PublicKey = e.srv.PublicKey() }))
	hs := httptest.NewServer(e.client.InteractionsHandler())
	t.Cleanup(hs.Close)
	e.srv.SetInteractionsURL(hs.URL)

	if status, body := e.srv.Ping(); status != http.StatusOK || strings.TrimSpace(string(body)) != `{"type":1}` {
		t.Errorf("PING = %d %s, want 200 {\"type\":1}", status, body)
	}
	ix := e.srv.Command(e.general.ID, e.alice, "ask", map[string]string{"question": "How do I reset my VPN token?"})
	if status, body := ix.HTTPStatus(); status != http.StatusAccepted {
		t.Errorf("signed /ask = %d %s, want 202", status, body)
	}
	e.srv.WaitFor(t, "the answer", func() bool {
		m, ok := ix.Original()
		return ok && len(m.Components) > 0
	})
	orig, _ := ix.Original()
	checkAnswer(t, orig)

	// Unsigned, tampered, stale or foreign requests are refused before
	// the body is read as JSON: even a body that is not JSON gets 401.
	cmd := ix.Payload()
	ping := []byte(`{"type":1,"id":"1","application_id":"` + e.srv.AppID + `","token":"t","version":1}`)
	tampered := []byte(strings.Replace(string(cmd), "reset my VPN token", "delete all tokens", 1))
	now := strconv.FormatInt(time.Now().Unix(), 10)
	old := strconv.FormatInt(time.Now().Add(-6*time.Minute).Unix(), 10)
	_, foreign, _ := ed25519.GenerateKey(nil)
	big := []byte(`{"type":1,"id":"3","pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	tests := []struct {
		name     string
		body     []byte
		sig, ts  string
		wantCode int
	}{
		{"valid signature", ping, e.srv.Sign(now, ping), now, http.StatusOK},
		{"tampered ping", []byte(`{"type":1, "id":"2"}`), e.srv.Sign(now, ping), now, http.StatusUnauthorized},
		{"tampered body", tampered, e.srv.Sign(now, cmd), now, http.StatusUnauthorized},
		{"not JSON, unsigned", []byte("{{{"), "", now, http.StatusUnauthorized},
		{"missing headers", cmd, "", "", http.StatusUnauthorized},
		{"timestamp 6 minutes old", cmd, e.srv.Sign(old, cmd), old, http.StatusUnauthorized},
		{"another key", cmd, hex.EncodeToString(ed25519.Sign(foreign, append([]byte(now), cmd...))), now, http.StatusUnauthorized},
		{"malformed signature", cmd, "zz" + e.srv.Sign(now, cmd)[2:], now, http.StatusUnauthorized},
		{"signed body over 1 MB", big, e.srv.Sign(now, big), now, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callbacks := len(e.srv.RequestsTo("POST /interactions/*/*/callback"))
			asked := len(e.pipe.questions())
			req, _ := http.NewRequest(http.MethodPost, hs.URL, bytes.NewReader(tt.body))
			if tt.sig != "" {
				req.Header.Set("X-Signature-Ed25519", tt.sig)
			}
			if tt.ts != "" {
				req.Header.Set("X-Signature-Timestamp", tt.ts)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantCode)
			}
			if tt.wantCode != http.StatusOK {
				e.client.WaitIdle()
				if n := len(e.srv.RequestsTo("POST /interactions/*/*/callback")); n != callbacks || len(e.pipe.questions()) != asked {
					t.Errorf("a refused request was acted on (%d callbacks, was %d)", n, callbacks)
				}
			}
		})
	}
}

// TestCloseFinishesAnswersInFlight: Close stops taking events and waits
// for the answer being written to be posted.
func TestCloseFinishesAnswersInFlight(t *testing.T) {
	e := newEnv(t, withStreaming())
	e.pipe.deltas = []string{"Open ", "the ", "VPN ", "portal ", "and ", "choose ", "Reset token [1]."}
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	e.srv.WaitFor(t, "the answer being written", func() bool { return len(e.srv.BotMessages(q.ID)) == 1 })
	if err := e.client.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m := e.srv.BotMessages(q.ID)[0]
	if len(m.Components) == 0 {
		t.Errorf("Close returned before the answer in flight was finished: %q", m.Content)
	}
	e.srv.WaitFor(t, "the gateway session to close", func() bool { return e.srv.Connected() == 0 })
	e.srv.Post(e.help.ID, e.alice, "Where is the expense policy?")
	e.client.WaitIdle()
	if n := len(e.pipe.questions()); n != 1 {
		t.Errorf("asked %d questions, want none after Close", n)
	}
}

func TestInlineChannelAnswersWithoutAThread(t *testing.T) {
	e := newEnv(t, withConfig(func(e *env, c *discord.Config) { c.Inline = map[string]bool{e.help.ID: true} }))
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	var answers []discordtest.Message
	e.srv.WaitFor(t, "an inline answer", func() bool { answers = e.srv.BotMessages(e.help.ID); return len(answers) == 1 })
	a := answers[0]
	checkAnswer(t, a)
	if a.MessageReference == nil || a.MessageReference.MessageID != q.ID {
		t.Errorf("answer reference = %+v, want a reply to the question", a.MessageReference)
	}
	if _, ok := e.srv.Channel(q.ID); ok {
		t.Errorf("an inline channel got a thread")
	}
	// A reply to the answer is a follow-up in the same conversation, and
	// is answered inline too.
	e.srv.Post(e.help.ID, e.bob, "and on a phone?", discordtest.ReplyTo(a))
	e.srv.WaitFor(t, "the follow-up answer", func() bool { answers = e.srv.BotMessages(e.help.ID); return len(answers) == 2 })
	qs := e.pipe.questions()
	if len(qs) != 2 || qs[1].Thread != q.ID || len(qs[1].History) != 1 || answers[1].MessageReference.MessageID != q.ID {
		t.Errorf("follow-up asked %+v; want it in the question's conversation with history", qs)
	}
	// Get a human moves the conversation into a thread where people talk.
	e.srv.Click(answers[1], button(t, answers[1], "Get a human"), e.bob)
	e.srv.WaitFor(t, "a thread for the handoff", func() bool { _, ok := e.srv.Channel(q.ID); return ok })
	notice := e.botReply(t, q.ID, 1)
	if !strings.Contains(notice.Content, "<@&"+e.role+">") {
		t.Errorf("handoff notice %q, want it in the new thread with the role", notice.Content)
	}
}

func TestRateLimitedAskerGetsAPoliteNoticeInTheChannel(t *testing.T) {
	e := newEnv(t, func(e *env) { e.userRate = 1 })
	first := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	e.botReply(t, first.ID, 1)
	second := e.srv.Post(e.help.ID, e.alice, "Where is the expense policy?")
	var notice []discordtest.Message
	e.srv.WaitFor(t, "the notice", func() bool { notice = e.srv.BotMessages(e.help.ID); return len(notice) == 1 })
	if n := notice[0]; !strings.Contains(n.Content, "try again") || n.MessageReference == nil || n.MessageReference.MessageID != second.ID {
		t.Errorf("notice = %+v, want a polite reply to the second question", n)
	}
	if _, ok := e.srv.Channel(second.ID); ok {
		t.Errorf("a thread was started just to say slow down")
	}
	if n := len(e.pipe.questions()); n != 1 {
		t.Errorf("asked %d questions, want 1", n)
	}
}

// TestHandoffEtiquette: while a thread is handed off the bot ignores
// plain messages in it and never answers staff, mention or not (a holder
// of the escalation role, or anyone but the asker); the asker's mention
// gets a one-line status of the handoff, without sources or links, with
// "Bring docent back", which answers what they asked meanwhile.
func TestHandoffEtiquette(t *testing.T) {
	e := newEnv(t)
	staffer := e.srv.AddUser("sam")
	q := e.srv.Post(e.help.ID, e.alice, "How do I reset my VPN token?")
	answerMsg := e.botReply(t, q.ID, 1)
	e.srv.Click(answerMsg, button(t, answerMsg, "Get a human"), e.alice)
	e.botReply(t, q.ID, 2) // the asker is told, the role pinged

	e.srv.Post(q.ID, e.alice, "is it the same on a phone?")
	e.srv.Post(q.ID, staffer, e.srv.Bot.Mention()+" can you answer the phone part?")
	e.srv.Post(q.ID, e.bob, e.srv.Bot.Mention()+" what does the VPN page say?", discordtest.WithRoles(e.role))
	e.srv.Post(q.ID, e.alice, e.srv.Bot.Mention()+" any update? it still fails on my phone")
	status := e.botReply(t, q.ID, 3)
	e.client.WaitIdle()
	if n := len(e.srv.BotMessages(q.ID)); n != 3 || len(e.pipe.questions()) != 1 {
		t.Fatalf("%d bot messages, %d questions: want 3 and 1 (only the asker's mention gets a reply)", n, len(e.pipe.questions()))
	}
	if len(status.Embeds) != 0 || strings.Contains(status.Content, "http") || !strings.Contains(status.Content, "the docs team") ||
		!strings.Contains(status.Content, "just now") || !slices.Equal(buttonLabels(status), []string{"Bring docent back"}) {
		t.Errorf("status = %q, embeds %d, buttons %q: want one line on the handoff, no sources or links, the button",
			status.Content, len(status.Embeds), buttonLabels(status))
	}
	e.srv.Click(status, button(t, status, "Bring docent back"), e.alice)
	back := e.botReply(t, q.ID, 4)
	if qs := e.pipe.questions(); len(qs) != 2 || qs[1].Text != "any update? it still fails on my phone" || len(back.Embeds) != 1 {
		t.Errorf("after Bring docent back: questions %+v, reply %q: want the question asked meanwhile answered with sources",
			qs, back.Content)
	}
}
