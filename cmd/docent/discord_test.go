package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot/discord/discordtest"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/store"
)

// discordYAML is a config with Discord pointed at a local server; extra
// is appended (more sources, channel scopes).
func discordYAML(dataDir string, srv *discordtest.Server, staff, role string, sources, channels string) string {
	return `data_dir: ` + dataDir + `
server:
  public_url: http://docent.test
sync:
  schedule: "off"
` + sources + `
discord:
  token: ${DISCORD_TOKEN}
  api_url: ` + srv.URL + `
  escalation_channel: "` + staff + `"
  escalation_role: "` + role + `"
  group_name: the docs team
  public_key: ` + srv.PublicKey() + `
` + channels
}

// mustServeConfig boots docent serve in this process with a config file
// (see serveMain), waits until it is ready, and returns its base URL and a
// stop function, also run at cleanup, that waits for a graceful shutdown.
func mustServeConfig(tb testing.TB, configPath string, env map[string]string, stderr io.Writer) (string, func() error) {
	tb.Helper()
	base, stopServe := MustServeMain(tb, &Main{ConfigPath: configPath, Stdout: io.Discard, Stderr: stderr, Getenv: envOf(env)})
	var once sync.Once
	var err error
	stop := func() error { once.Do(func() { err = stopServe() }); return err }
	tb.Cleanup(func() { stop() })
	waitReady(tb, base)
	return base, stop
}

// answerIn waits for the bot's answer (the message with buttons) in a
// thread and returns it.
func answerIn(t *testing.T, srv *discordtest.Server, thread string) discordtest.Message {
	t.Helper()
	var m discordtest.Message
	srv.WaitFor(t, "an answer in thread "+thread, func() bool {
		for _, b := range srv.BotMessages(thread) {
			if len(b.Components) > 0 {
				m = b
				return true
			}
		}
		return false
	})
	return m
}

// cited returns the links of an answer's sources embed.
func cited(m discordtest.Message) []string {
	var out []string
	for _, e := range m.Embeds {
		for _, l := range regexp.MustCompile(`\]\((https?://[^)]+)\)`).FindAllStringSubmatch(e.Description, -1) {
			out = append(out, l[1])
		}
	}
	return out
}

// TestServeDiscordEndToEnd: docent serve with discord.api_url pointed at
// a local Discord answers a mention from the bundled handbook in a new
// thread, through the real wiring, and shuts the gateway down with it.
func TestServeDiscordEndToEnd(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(t)
	general := srv.AddChannel("general", discordtest.ChannelText)
	staff := srv.AddChannel("staff", discordtest.ChannelText)
	role := srv.AddRole("docs-team")
	alice := srv.AddUser("alice")
	dataDir := handbookData(t) // the handbook, already indexed
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	if err := os.WriteFile(cfg, []byte(discordYAML(dataDir, srv, staff.ID, role, "", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	base, stop := mustServeConfig(t, cfg, map[string]string{"DISCORD_TOKEN": srv.Token}, &logs)
	srv.WaitReady(t)

	// With the application's public key configured, interactions are
	// served beside the API, verified.
	ping := []byte(`{"type":1,"id":"1","application_id":"` + srv.AppID + `","token":"t","version":1}`)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	for _, tc := range []struct {
		sig  string
		want int
	}{{srv.Sign(ts, ping), http.StatusOK}, {srv.Sign(ts, []byte("{}")), http.StatusUnauthorized}} {
		req, _ := http.NewRequest(http.MethodPost, base+"/discord/interactions", bytes.NewReader(ping))
		req.Header.Set("X-Signature-Ed25519", tc.sig)
		req.Header.Set("X-Signature-Timestamp", ts)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("POST /discord/interactions = %d, want %d", resp.StatusCode, tc.want)
		}
	}

	q := srv.Post(general.ID, alice, srv.Bot.Mention()+" How do I reset my VPN token?")
	m := answerIn(t, srv, q.ID)
	links := cited(m)
	// The handbook was indexed before this server's public_url was set, so
	// its links keep the URL it was indexed under.
	if len(links) == 0 || !strings.Contains(links[0], "/docs/handbook/") ||
		!strings.Contains(m.Content, "/docs/handbook/") {
		t.Errorf("answer %q cites %q, want the handbook pages linked", m.Content, links)
	}
	db, err := store.Open(context.Background(), filepath.Join(dataDir, "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	turns, err := db.ThreadTurns(context.Background(), "discord", general.ID, q.ID, 5)
	db.Close()
	if err != nil || len(turns) != 1 || turns[0].Answer.Status != docent.StatusAnswered {
		t.Errorf("stored turns = %+v, %v", turns, err)
	}

	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	// serve sent the close frame; the session ends when the server reads it.
	srv.WaitFor(t, "the gateway session to end with serve", func() bool { return srv.Connected() == 0 })
	if strings.Contains(logs.String(), srv.Token) {
		t.Errorf("the bot token is in the logs")
	}
}

// TestDiscordChannelScope: a question in the public channel never cites
// the internal source, even though the internal runbook is the best
// match (which the unscoped staff channel shows).
func TestDiscordChannelScope(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(t)
	public := srv.AddChannel("community-help", discordtest.ChannelText)
	staff := srv.AddChannel("staff", discordtest.ChannelText)
	role := srv.AddRole("docs-team")
	alice := srv.AddUser("alice")
	internal := t.TempDir()
	runbook := `# Resetting VPN tokens (IT runbook)

How do I reset my VPN token? To reset a VPN token, open the Kestrel VPN admin console, find the
person's VPN token under Tokens, choose Reset VPN token, and read them the one-time VPN token reset code.

## VPN token reset for contractors

A contractor's VPN token is reset the same way, after their manager approves the VPN token reset.
`
	if err := os.WriteFile(filepath.Join(internal, "vpn-token-reset.md"), []byte(runbook), 0o644); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	sources := `sources:
  - name: handbook
    type: bundled
  - name: internal
    type: dir
    dir:
      path: ` + internal
	channels := `  channels:
    - id: "` + public.ID + `"
      sources: [handbook]
      auto_answer: true
    - id: "` + staff.ID + `"
      auto_answer: true
`
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	if err := os.WriteFile(cfg, []byte(discordYAML(dataDir, srv, staff.ID, role, sources, channels)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stop := mustServeConfig(t, cfg, map[string]string{"DISCORD_TOKEN": srv.Token}, io.Discard)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	srv.WaitReady(t)

	const question = "How do I reset my VPN token?"
	control := srv.Post(staff.ID, alice, question)
	if links := cited(answerIn(t, srv, control.ID)); len(links) == 0 || !strings.Contains(links[0], "/docs/internal/") {
		t.Fatalf("unscoped answer cites %q: want the internal runbook first (the test needs it to be the best match)", links)
	}
	q := srv.Post(public.ID, alice, question)
	m := answerIn(t, srv, q.ID)
	links := cited(m)
	if len(links) == 0 {
		t.Fatalf("public answer %q cites nothing", m.Content)
	}
	for _, msg := range srv.BotMessages(q.ID) {
		all := msg.Content
		for _, e := range msg.Embeds {
			all += e.Description
		}
		if strings.Contains(all, "/docs/internal/") || strings.Contains(all, "IT runbook") {
			t.Errorf("the public channel's answer cites the internal source: %q", all)
		}
	}
	if !slices.ContainsFunc(links, func(l string) bool { return strings.Contains(l, "/docs/handbook/") }) {
		t.Errorf("public answer cites %q, want the handbook", links)
	}
}

// TestDiscordFlagsStaleSources: serve hands the console's stale report to
// the bot, so a cited document older than its source's stale_after_days
// is flagged next to its source in the answer's embed.
func TestDiscordFlagsStaleSources(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(t)
	help := srv.AddChannel("help", discordtest.ChannelText)
	staff := srv.AddChannel("staff", discordtest.ChannelText)
	role := srv.AddRole("docs-team")
	alice := srv.AddUser("alice")
	docs := t.TempDir()
	page := "---\nupdated: 2020-01-02\n---\n# VPN\n\nReset your VPN token in the Gatekeeper portal under Security › Tokens. The VPN token expires every 90 days.\n"
	if err := os.WriteFile(filepath.Join(docs, "vpn.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	sources := "sources:\n  - name: old\n    type: dir\n    stale_after_days: 30\n    dir:\n      path: " + docs
	channels := "  channels:\n    - id: \"" + help.ID + "\"\n      auto_answer: true\n"
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	if err := os.WriteFile(cfg, []byte(discordYAML(t.TempDir(), srv, staff.ID, role, sources, channels)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stop := mustServeConfig(t, cfg, map[string]string{"DISCORD_TOKEN": srv.Token}, io.Discard)
	srv.WaitReady(t)

	q := srv.Post(help.ID, alice, "How do I reset my VPN token?")
	m := answerIn(t, srv, q.ID)
	var line string
	for _, e := range m.Embeds {
		for _, l := range strings.Split(e.Description, "\n") {
			if strings.Contains(l, "/docs/old/vpn.md") {
				line = l
			}
		}
	}
	if !strings.Contains(line, "may be out of date") {
		t.Errorf("the stale page's source line %q is not flagged; embeds %+v", line, m.Embeds)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// TestDocentBinaryServesDiscord builds the real binary and runs `docent
// serve` with only discord.api_url (and the token) pointing at a local
// Discord: a question is answered, SIGTERM shuts it down cleanly.
func TestDocentBinaryServesDiscord(t *testing.T) {
	t.Parallel()
	bin := docentBinary(t)
	srv := discordtest.NewServer(t)
	help := srv.AddChannel("help", discordtest.ChannelText)
	alice := srv.AddUser("alice")
	dir := t.TempDir()
	copyHandbook(t, filepath.Join(dir, "data")) // already indexed: the binary starts ready
	cfg := filepath.Join(dir, "docent.yaml")
	yaml := "data_dir: " + filepath.Join(dir, "data") + "\ndiscord:\n  token: ${DISCORD_TOKEN}\n  api_url: " + srv.URL + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DISCORD_TOKEN="+srv.Token)
	var stderr syncBuffer
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	})
	srv.WaitReady(t)
	var addr []string
	srv.WaitFor(t, "the serving line", func() bool {
		addr = regexp.MustCompile(`msg=serving addr=(\S+)`).FindStringSubmatch(stderr.String())
		return addr != nil
	})
	waitReady(t, "http://"+addr[1])

	q := srv.Post(help.ID, alice, srv.Bot.Mention()+" How do I reset my VPN token?")
	m := answerIn(t, srv, q.ID)
	if links := cited(m); len(links) == 0 || !strings.Contains(links[0], "/docs/handbook/") {
		t.Errorf("answer %q cites %q, want the handbook", m.Content, links)
	}
	if cmds := srv.Commands(); len(cmds) != 1 || cmds[0].Name != "ask" {
		t.Errorf("registered commands = %+v, want /ask", cmds)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("docent serve exited with %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("docent serve did not stop on SIGTERM\n%s", stderr.String())
	}
	srv.WaitFor(t, "the gateway session to end with the process", func() bool { return srv.Connected() == 0 })
	if strings.Contains(stderr.String(), srv.Token) {
		t.Errorf("the bot token is in the logs")
	}
}

func TestConfigRedactsDiscordToken(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	yaml := "discord:\n  token: ${DISCORD_TOKEN}\n  escalation_channel: \"1234\"\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	m := &Main{ConfigPath: cfg, Stdout: &out, Stderr: io.Discard, Getenv: envOf(map[string]string{"DISCORD_TOKEN": "MTE.secret.token"})}
	if err := m.PrintConfig(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "MTE.secret.token") || !strings.Contains(out.String(), "token: REDACTED") ||
		!strings.Contains(out.String(), "chat discord:") {
		t.Errorf("docent config =\n%s\nwant the token redacted and the Discord adapter listed", out.String())
	}
}

// TestServeDiscordStreamsAModelAnswer: with a streaming model (the
// OpenAI-compatible API, served locally), serve wires answer.Recorder's
// AskStream to the Discord adapter: the answer appears in one message
// while it is written, then becomes the verified answer with its sources
// and buttons.
func TestServeDiscordStreamsAModelAnswer(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(t)
	help := srv.AddChannel("help", discordtest.ChannelText)
	alice := srv.AddUser("alice")
	dir := t.TempDir()
	copyHandbook(t, filepath.Join(dir, "data"))
	servers := modelServers(t)
	cfg := llmConfig(t, dir, "openai", "offline", servers, "discord:\n  token: ${DISCORD_TOKEN}\n  api_url: "+srv.URL+"\n")
	env := map[string]string{"DISCORD_TOKEN": srv.Token}
	for k, v := range testKeys {
		env[k] = v
	}
	mustServeConfig(t, cfg, env, io.Discard)
	srv.WaitReady(t)

	q := srv.Post(help.ID, alice, srv.Bot.Mention()+" How much are hotel stays reimbursed per night?")
	m := answerIn(t, srv, q.ID)
	if len(srv.BotMessages(q.ID)) != 1 || m.Edits < 2 || len(m.History) < 2 || !strings.HasSuffix(m.History[len(m.History)-1], " ▍") {
		t.Errorf("answer message edited %d times through %q: want it posted at once, shown growing, then replaced", m.Edits, m.History)
	}
	if links := cited(m); len(links) == 0 || !strings.Contains(links[0], "/docs/handbook/") {
		t.Errorf("streamed answer %q cites %q, want the handbook", m.Content, links)
	}
	if calls := servers["openai"].Calls(); !slices.ContainsFunc(calls, func(c llmtest.Call) bool { return c.Stream }) {
		t.Errorf("the model was never asked to stream")
	}
}

// TestServeStopsOnARefusedDiscordToken: a token Discord refuses stops
// serve with an error that says so (without the token), rather than
// retrying forever.
func TestServeStopsOnARefusedDiscordToken(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(t)
	dataDir := handbookData(t)
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	yaml := "data_dir: " + dataDir + "\nsync:\n  schedule: \"off\"\ndiscord:\n  token: ${DISCORD_TOKEN}\n  api_url: " + srv.URL + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(map[string]string{"DISCORD_TOKEN": "MTE.wrong.token"})}
	done := make(chan error, 1)
	go func() { done <- m.Serve(context.Background(), []string{"--addr", "127.0.0.1:0"}); m.Close() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "token was refused") || strings.Contains(err.Error(), "MTE.wrong.token") {
			t.Errorf("serve = %v, want the refused token named (not shown)", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve kept running with a refused token")
	}
	if strings.Contains(logs.String(), "MTE.wrong.token") {
		t.Errorf("the token is in the logs")
	}
}
