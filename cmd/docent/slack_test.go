package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot/discord/discordtest"
	"github.com/docent-hq/docent/bot/slack"
	"github.com/docent-hq/docent/bot/slack/workspacetest"
	"github.com/docent-hq/docent/store"
)

const (
	slackHelp       = "C0HELP0001"
	slackEscalation = "C0ESCALATE"
	slackAsker      = "U0ASKER001"
	slackStaff      = "U0STAFF001"
)

// mustSlackConfig writes a config file under dir: data in dir/data,
// scheduled syncs off, the given sources (YAML list items; "" keeps the
// bundled handbook) and the slack section pointed at ws with extra keys.
func mustSlackConfig(tb testing.TB, dir string, ws *workspacetest.Workspace, sources, extra string) string {
	tb.Helper()
	y := "data_dir: " + filepath.Join(dir, "data") + "\nsync:\n  schedule: \"off\"\n"
	if sources != "" {
		y += "sources:\n" + sources
	}
	y += fmt.Sprintf("slack:\n  api_url: %s\n  bot_token: %s\n  app_token: %s\n%s", ws.APIURL(), ws.BotToken, ws.AppToken, extra)
	p := filepath.Join(dir, "docent.yaml")
	if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// noSecrets fails when logs quote one of the workspace's credentials.
func noSecrets(tb testing.TB, logs string, ws *workspacetest.Workspace) {
	tb.Helper()
	for _, s := range []string{ws.BotToken, ws.AppToken, ws.SigningSecret} {
		if strings.Contains(logs, s) {
			tb.Errorf("logs quote a Slack credential %q", s)
		}
	}
}

// TestSlackEndToEnd runs serve's own wiring over the bundled handbook with
// Slack in Socket Mode against a local workspace: a mention is answered
// in its thread from the handbook, with [n] linked to the pages serve
// itself serves, the sources and the buttons; a follow-up needs no
// mention; "Get a human" escalates with the permalink and the group, the
// bot goes quiet, and Claim and Resolve land in the store.
func TestSlackEndToEnd(t *testing.T) {
	t.Parallel()
	ws := workspacetest.New(t)
	dir := t.TempDir()
	cfg := mustSlackConfig(t, dir, ws, "", "  escalation_channel: "+slackEscalation+
		"\n  user_group: S0ITTEAM01\n  group_name: the IT team\n")
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(nil)}
	base, stop := serveReady(t, m)
	ws.WaitConnected(t)
	ctx := context.Background()

	mention, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "What does Gatekeeper error GK-409 mean?"})
	if ack := ws.Send(t, "events_api", mention.Body); ack.After > 3*time.Second {
		t.Errorf("acked after %s", ack.After)
	}
	reply := ws.WaitBotMessages(t, slackHelp, mention.TS, 1)[0]
	text := reply.AllText()
	for _, want := range []string{"GK-409", "|[1]>", "<http://localhost:8080/docs/handbook/it/gatekeeper-error-codes.md#error-code-reference|Gatekeeper Error Codes>"} {
		if !strings.Contains(text, want) {
			t.Errorf("reply lacks %q:\n%s", want, text)
		}
	}
	if !slices.Equal(reply.ButtonTexts(), []string{"Helpful", "Not helpful", "Get a human"}) {
		t.Errorf("buttons = %q", reply.ButtonTexts())
	}

	follow := ws.Post(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "and what about GK-401?", ThreadTS: mention.TS})
	ws.Send(t, "events_api", follow.Body)
	ws.WaitBotMessages(t, slackHelp, mention.TS, 2)
	turns, err := m.Store.ThreadTurns(ctx, "slack", slackHelp, mention.TS, 10)
	if err != nil || len(turns) != 2 || turns[1].Question.Text != "and what about GK-401?" ||
		turns[1].Question.User != slackAsker || !strings.Contains(turns[1].Answer.Text, "GK-401") {
		t.Fatalf("thread turns = %+v, %v", turns, err)
	}

	ws.Send(t, "interactive", ws.Click(t, reply, "docent_handoff", slackAsker))
	var post workspacetest.Message
	ws.Wait(t, 30*time.Second, "the escalation post", func() bool {
		msgs := ws.Messages(slackEscalation)
		if len(msgs) == 0 {
			return false
		}
		post = msgs[0]
		return true
	})
	for _, want := range []string{"<!subteam^S0ITTEAM01>", ws.Permalink(slackHelp, mention.TS), "GK-409"} {
		if !strings.Contains(post.AllText(), want) {
			t.Errorf("escalation lacks %q:\n%s", want, post.AllText())
		}
	}
	ws.WaitBotMessages(t, slackHelp, mention.TS, 3) // the asker is told
	quiet := ws.Post(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "what does GK-500 mean?", ThreadTS: mention.TS})
	ws.Send(t, "events_api", quiet.Body)
	hs, err := m.Store.ListHandoffs(ctx, store.HandoffFilter{})
	if err != nil || len(hs) != 1 {
		t.Fatalf("handoffs = %+v, %v", hs, err)
	}
	ws.Send(t, "interactive", ws.Click(t, post, "docent_claim", slackStaff))
	ws.Wait(t, 30*time.Second, "claimed", func() bool {
		h, _ := m.Store.Handoff(ctx, hs[0].ID)
		return h.State == docent.HandoffClaimed && h.ClaimedBy == slackStaff
	})
	ws.Send(t, "interactive", ws.Click(t, post, "docent_resolve", slackStaff))
	ws.Wait(t, 30*time.Second, "resolved", func() bool {
		h, _ := m.Store.Handoff(ctx, hs[0].ID)
		return h.State == docent.HandoffResolved && h.ResolvedBy == slackStaff
	})
	ws.WaitBotMessages(t, slackHelp, mention.TS, 5)
	if n := len(ws.BotMessages(slackHelp, mention.TS)); n != 5 { // answer, follow-up, handoff notice, claimed, resolved
		t.Errorf("%d bot messages in the thread, want 5 (nothing for the question while handed off)", n)
	}

	// Slack refuses the answer and the apology: the turn says so, and so
	// does the console (list and turn page).
	ws.FailNext("chat.postMessage", workspacetest.Fault{Error: "channel_not_found"}, workspacetest.Fault{Error: "channel_not_found"})
	lost, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "How do I reset my VPN token?"})
	ws.Send(t, "events_api", lost.Body)
	var turn docent.Turn
	ws.Wait(t, 30*time.Second, "the undelivered turn", func() bool {
		turns, _ := m.Store.ThreadTurns(ctx, "slack", slackHelp, lost.TS, 1)
		if len(turns) == 1 && turns[0].Delivery != "" {
			turn = turns[0]
			return true
		}
		return false
	})
	if turn.Delivery != docent.DeliveryFailed || !strings.Contains(turn.DeliveryError, "channel_not_found") {
		t.Errorf("turn delivery %q %q, want failed with Slack's error", turn.Delivery, turn.DeliveryError)
	}
	c := newConsoleClient(t, base)
	c.login("admin", mustOneTimePassword(t, logs.String()))
	_, doc := c.get("/turns/" + strconv.FormatInt(turn.ID, 10))
	if got := doc.Find(`[data-testid=delivery]`).Text(); !strings.Contains(got, "Not delivered") || !strings.Contains(got, "channel_not_found") {
		t.Errorf("turn page delivery = %q, want not delivered with Slack's error", got)
	}
	_, doc = c.get("/turns")
	if n := doc.Find(`[data-testid=turn-row][data-turn="` + strconv.FormatInt(turn.ID, 10) + `"] [data-testid=undelivered]`).Length(); n != 1 {
		t.Errorf("turn list marks the undelivered turn %d times, want once", n)
	}
	if got := metricSum(t, base, `docent_chat_deliveries_total{platform="slack",result="failed"}`); got != 1 {
		t.Errorf("failed deliveries counted %v, want 1", got)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	noSecrets(t, logs.String(), ws)
}

// TestSlackChannelScope: in a public channel scoped to the public source
// (or to the public label), a question whose best match is an internal
// page never cites it, while an unscoped channel does cite it. Events come over HTTP, to serve's own
// server, signed.
func TestSlackChannelScope(t *testing.T) {
	t.Parallel()
	ws := workspacetest.New(t)
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(p)
	}
	public := write("public/office.md", "---\nlabels: [public]\n---\n# Office\n\nThe office opens at nine and closes at six.\n\n## Parking\n\nVisitors park on level -1. Staff may reset a parking token at the front desk.\n")
	internal := write("internal/vpn.md", "# VPN\n\nReset your VPN token in the Gatekeeper portal under Security › Tokens. The VPN token expires every 90 days.\n")
	sources := "  - name: public\n    type: dir\n    dir:\n      path: " + public + "\n" +
		"  - name: internal\n    type: dir\n    dir:\n      path: " + internal + "\n"
	cfg := mustSlackConfig(t, dir, ws, sources, "  mode: http\n  signing_secret: "+ws.SigningSecret+
		"\n  channels:\n    - id: C0PUBLIC01\n      sources: [public]\n    - id: C0LABELED1\n      labels: [public]\n")
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(nil)}
	base, stop := serveReady(t, m)

	ask := func(channel string) []docent.Citation {
		t.Helper()
		ev, _ := ws.Mention(workspacetest.Said{Channel: channel, User: slackAsker, Text: "How do I reset my VPN token?"})
		if resp := ws.PostEvent(t, base+slack.EventsPath, ev.Body, 0); resp.StatusCode != http.StatusOK {
			t.Fatalf("event: HTTP %d", resp.StatusCode)
		}
		reply := ws.WaitBotMessages(t, channel, ev.TS, 1)[0]
		turns, err := m.Store.ThreadTurns(context.Background(), "slack", channel, ev.TS, 1)
		if err != nil || len(turns) != 1 {
			t.Fatalf("turns = %+v, %v", turns, err)
		}
		if channel != "C0ENGINEER" && strings.Contains(reply.AllText(), "/docs/internal/") {
			t.Errorf("the public channel's reply links an internal page:\n%s", reply.AllText())
		}
		return turns[0].Answer.Citations
	}
	open := ask("C0ENGINEER")
	if len(open) == 0 || !strings.HasPrefix(open[0].DocID, "internal:") {
		t.Fatalf("unscoped channel cites %+v, want the internal VPN page first (the best match)", open)
	}
	for _, channel := range []string{"C0PUBLIC01", "C0LABELED1"} { // scoped by source, and by label
		for _, c := range ask(channel) {
			if !strings.HasPrefix(c.DocID, "public:") {
				t.Errorf("the public channel %s cites %s", channel, c.DocID)
			}
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	noSecrets(t, logs.String(), ws)
}

// TestSlackFlagsStaleSources: serve's own wiring hands the console's
// stale report to the bot, so a cited document older than its source's
// stale_after_days is flagged next to its source in the reply, and a
// fresh one is not.
func TestSlackFlagsStaleSources(t *testing.T) {
	t.Parallel()
	ws := workspacetest.New(t)
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(p)
	}
	old := write("old/vpn.md", "---\nupdated: 2020-01-02\n---\n# VPN\n\nReset your VPN token in the Gatekeeper portal under Security › Tokens. The VPN token expires every 90 days.\n")
	fresh := write("fresh/office.md", "# Office\n\nThe office opens at nine and closes at six. Visitors park on level -1.\n")
	sources := "  - name: old\n    type: dir\n    stale_after_days: 30\n    dir:\n      path: " + old + "\n" +
		"  - name: fresh\n    type: dir\n    stale_after_days: 30\n    dir:\n      path: " + fresh + "\n"
	cfg := mustSlackConfig(t, dir, ws, sources, "")
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(nil)}
	_, stop := serveReady(t, m)
	ws.WaitConnected(t)

	ask := func(text string) string {
		t.Helper()
		ev, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: text})
		ws.Send(t, "events_api", ev.Body)
		return ws.WaitBotMessages(t, slackHelp, ev.TS, 1)[0].AllText()
	}
	const flag = "may be out of date"
	var vpnLine string
	text := ask("How do I reset my VPN token?")
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "*[1]*") && strings.Contains(line, "VPN") {
			vpnLine = line
		}
	}
	if !strings.Contains(vpnLine, flag) || strings.Count(text, flag) != 1 {
		t.Errorf("the stale VPN page is not flagged next to its source (line %q):\n%s", vpnLine, text)
	}
	if text := ask("When does the office open?"); !strings.Contains(text, "Office") || strings.Contains(text, flag) {
		t.Errorf("a fresh page is flagged, or not cited:\n%s", text)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestSlackAndDiscordBinary builds the docent binary and runs `docent
// serve` with nothing but slack.api_url, discord.api_url and the tokens in
// its config: it indexes the bundled handbook, connects to both, answers
// a Slack mention in its thread and a Discord mention in a new thread,
// and exits cleanly on SIGTERM, both sessions closed.
func TestSlackAndDiscordBinary(t *testing.T) {
	t.Parallel()
	bin := docentBinary(t)
	ws := workspacetest.New(t)
	srv := discordtest.NewServer(t)
	discordHelp := srv.AddChannel("help", discordtest.ChannelText)
	alice := srv.AddUser("alice")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "docent.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("slack:\n  api_url: %s\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: ${SLACK_APP_TOKEN}\n"+
		"discord:\n  api_url: %s\n  token: ${DISCORD_TOKEN}\n", ws.APIURL(), srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testAddr(t)
	var logs syncBuffer
	cmd := exec.Command(bin, "--config", cfg, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "DOCENT_DATA="+filepath.Join(dir, "data"),
		"SLACK_BOT_TOKEN="+ws.BotToken, "SLACK_APP_TOKEN="+ws.AppToken, "DISCORD_TOKEN="+srv.Token)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Error("docent serve still running after SIGKILL")
		}
		if t.Failed() {
			t.Logf("docent serve's output:\n%s", logs.String())
		}
	})
	waitReady(t, "http://"+addr)
	ws.WaitConnected(t)

	mention, _ := ws.Mention(workspacetest.Said{Channel: slackHelp, User: slackAsker, Text: "What does Gatekeeper error GK-409 mean?"})
	ws.Send(t, "events_api", mention.Body)
	reply := ws.WaitBotMessages(t, slackHelp, mention.TS, 1)[0]
	if !strings.Contains(reply.AllText(), "GK-409") || !strings.Contains(reply.AllText(), "|[1]>") ||
		len(reply.Buttons()) != 3 {
		t.Errorf("reply:\n%s\nbuttons %q", reply.AllText(), reply.ButtonTexts())
	}
	srv.WaitReady(t)
	q := srv.Post(discordHelp.ID, alice, srv.Bot.Mention()+" What does Gatekeeper error GK-409 mean?")
	if m := answerIn(t, srv, q.ID); !strings.Contains(m.Content, "GK-409") || len(cited(m)) == 0 {
		t.Errorf("Discord answer %q cites %q", m.Content, cited(m))
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if exitErr != nil {
			t.Errorf("docent serve exited with %v", exitErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("docent serve did not exit on SIGTERM")
	}
	noSecrets(t, logs.String(), ws)
	if strings.Contains(logs.String(), srv.Token) {
		t.Errorf("the Discord token is in the logs")
	}
	srv.WaitFor(t, "the Discord gateway session to end with the process", func() bool { return srv.Connected() == 0 })
}

// serveReady runs m.Serve on a free port until the test ends (or stop),
// and waits until it is ready.
func serveReady(t *testing.T, m *Main) (string, func() error) {
	t.Helper()
	base, stop := MustServeMain(t, m)
	stop = sync.OnceValue(stop)
	t.Cleanup(func() { _ = stop() })
	waitReady(t, base)
	return base, stop
}

// testAddr returns a loopback address with a port free a moment ago.
func testAddr(tb testing.TB) string {
	tb.Helper()
	addr, err := freeAddr()
	if err != nil {
		tb.Fatal(err)
	}
	return addr
}

// TestSlackStreamsModelAnswers: with a model answerer (an OpenAI-compatible
// server streaming a scripted model's reply), a question in an assistant
// thread shows the status, streams into the thread through
// chat.startStream / appendStream / stopStream, and ends as the verified
// answer with its sources and buttons.
func TestSlackStreamsModelAnswers(t *testing.T) {
	t.Parallel()
	servers := modelServers(t)
	ws := workspacetest.New(t)
	dir := t.TempDir()
	copyHandbook(t, filepath.Join(dir, "data"))
	cfg := llmConfig(t, dir, "openai", "offline", servers, fmt.Sprintf("slack:\n  api_url: %s\n  bot_token: %s\n  app_token: %s\n",
		ws.APIURL(), ws.BotToken, ws.AppToken))
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(testKeys), Retry: fastRetry}
	_, stop := serveReady(t, m)

	const dm = "D0ASKER001"
	started, thread := ws.AssistantThreadStarted(dm, slackAsker)
	ws.Send(t, "events_api", started.Body)
	ws.Send(t, "events_api", ws.Post(workspacetest.Said{Channel: dm, User: slackAsker,
		Text: "how many vacation days do employees get?", ThreadTS: thread}).Body)
	var msg workspacetest.Message
	ws.Wait(t, 60*time.Second, "the streamed answer, finished", func() bool {
		msgs := ws.BotMessages(dm, thread)
		if len(msgs) == 0 || msgs[0].Edits == 0 {
			return false
		}
		msg = msgs[0]
		return true
	})
	start, stopped := ws.Calls("chat.startStream"), ws.Calls("chat.stopStream")
	if len(start) != 1 || len(stopped) != 1 {
		t.Fatalf("%d chat.startStream and %d chat.stopStream calls, want one each", len(start), len(stopped))
	}
	streamed := start[0].Args["markdown_text"]
	for _, a := range ws.Calls("chat.appendStream") {
		streamed += a.Args["markdown_text"]
	}
	streamed += stopped[0].Args["markdown_text"]
	turns, err := m.Store.ThreadTurns(context.Background(), "slack", dm, thread, 1)
	if err != nil || len(turns) != 1 || turns[0].Answer.Status != docent.StatusAnswered {
		t.Fatalf("turns = %+v, %v", turns, err)
	}
	if !strings.Contains(streamed, "[1]") || len(streamed) < len(turns[0].Answer.Text)/2 {
		t.Errorf("streamed %q; the answer is %q", streamed, turns[0].Answer.Text)
	}
	if statuses := ws.Calls("assistant.threads.setStatus"); len(statuses) == 0 || !statuses[0].At.Before(start[0].At) {
		t.Errorf("no status before the stream started: %+v", statuses)
	}
	if msg.Streaming || !strings.Contains(msg.AllText(), "|[1]>") || !strings.Contains(msg.AllText(), "<http://localhost:8080/docs/handbook/") ||
		!slices.Equal(msg.ButtonTexts(), []string{"Helpful", "Not helpful", "Get a human"}) {
		t.Errorf("final message: buttons %q\n%s", msg.ButtonTexts(), msg.AllText())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	noSecrets(t, logs.String(), ws)
	for _, key := range []string{testOpenAIKey, testGeminiKey} {
		if strings.Contains(logs.String(), key) {
			t.Errorf("logs quote a model key")
		}
	}
}

// TestServeStopsOnARefusedSlackToken: a bot token or an app-level token
// the workspace refuses stops serve with an error that names it without
// showing it, and neither token reaches the logs.
func TestServeStopsOnARefusedSlackToken(t *testing.T) {
	t.Parallel()
	ws := workspacetest.New(t)
	const wrongBot, wrongApp = "xoxb-0-0-wrong-bot-token", "xapp-1-A0-wrong-app-token"
	for _, tt := range []struct{ name, bot, app string }{
		{"bot token", wrongBot, ws.AppToken},
		{"app-level token", ws.BotToken, wrongApp},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "docent.yaml")
			y := "data_dir: " + handbookData(t) + "\nsync:\n  schedule: \"off\"\nslack:\n  api_url: " + ws.APIURL() +
				"\n  bot_token: ${SLACK_BOT_TOKEN}\n  app_token: ${SLACK_APP_TOKEN}\n"
			if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs,
				Getenv: envOf(map[string]string{"SLACK_BOT_TOKEN": tt.bot, "SLACK_APP_TOKEN": tt.app})}
			done := make(chan error, 1)
			go func() { done <- m.Serve(context.Background(), []string{"--addr", "127.0.0.1:0"}); m.Close() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), wrongBot) || strings.Contains(err.Error(), wrongApp) {
					t.Errorf("serve = %v, want invalid_auth, without the token", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("serve kept running with a refused token")
			}
			for _, s := range []string{wrongBot, wrongApp, ws.BotToken, ws.AppToken} {
				if strings.Contains(logs.String(), s) {
					t.Errorf("a token is in the logs: %q", s)
				}
			}
		})
	}
}
