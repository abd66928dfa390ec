package slack

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

// Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks):
// a message holds up to 50 blocks, a section's text up to 3,000
// characters, a context block up to 10 elements.
const (
	maxBlocks        = 50
	maxSectionText   = 3000
	maxContextItems  = 10
	maxFallbackText  = 3000
	maxEscalatedText = 2500
)

// Action IDs of the buttons docent draws; their values are JSON (see
// buttonValue).
const (
	actionPrefix   = "docent_"
	blockActions   = "docent_actions"
	blockState     = "docent_state"
	blockEscalated = "docent_escalation"
	callbackReason = "docent_not_helpful"
	blockReason    = "docent_reason"
	actionReason   = "reason"
)

// buttonLabels are the buttons' texts.
var buttonLabels = map[bot.ActionKind]string{
	bot.ActionHelpful:    "Helpful",
	bot.ActionNotHelpful: "Not helpful",
	bot.ActionHandoff:    "Get a human",
	bot.ActionClaim:      "Claim",
	bot.ActionResolve:    "Resolve",
	bot.ActionResume:     "Bring docent back",
}

// buttonValue is what a button carries back when pressed: the turn the
// answer showed and its thread (feedback, handoff), or the handoff
// (claim, resolve). Channel is set in a modal's private metadata.
type buttonValue struct {
	Turn    int64  `json:"turn,omitempty"`
	Thread  string `json:"thread,omitempty"`
	Channel string `json:"channel,omitempty"`
	Handoff int64  `json:"handoff,omitempty"`
}

func (v buttonValue) String() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// message is one chat message to post: its blocks and the notification
// text that goes with them.
type message struct {
	text   string
	blocks []slackapi.Block
}

// render turns a reply into the messages that show it, each within Block
// Kit's limits: the text as sections (markdown turned into mrkdwn, [n]
// markers into links to the sources), the sources as context (title ·
// section · updated, stale ones flagged; an uncertain reply's headed
// "Closest pages"), and the buttons last.
func render(r bot.Reply, thread string) []message {
	var body []slackapi.Block
	text := mrkdwn(r.Text, r.Citations)
	if r.Kind == bot.ReplyStatus {
		// A handoff's status names the person who claimed it.
		text = userMention.ReplaceAllString(text, "<@$1>")
	}
	for i, part := range splitText(text, maxSectionText) {
		body = append(body, slackapi.NewSectionBlock(
			slackapi.NewTextBlockObject(slackapi.MarkdownType, part, false, false), nil, nil,
			slackapi.SectionBlockOptionBlockID("docent_text_"+strconv.Itoa(i))))
	}
	var tail []slackapi.Block
	label := ""
	if r.Kind == bot.ReplyUncertain {
		// The closest page is no source of an answer: the reply states
		// nothing as one.
		label = closestLabel
	}
	tail = append(tail, sourceBlocks(r.Citations, r.Stale, label)...)
	if len(r.Buttons) > 0 {
		var els []slackapi.BlockElement
		for i, k := range r.Buttons {
			btn := slackapi.NewButtonBlockElement(actionPrefix+string(k),
				buttonValue{Turn: r.TurnID, Thread: thread, Handoff: r.HandoffID}.String(),
				slackapi.NewTextBlockObject(slackapi.PlainTextType, buttonLabels[k], false, false))
			if i == 0 && k == bot.ActionHandoff {
				btn.Style = slackapi.StylePrimary
			}
			els = append(els, btn)
		}
		tail = append(tail, slackapi.NewActionBlock(blockActions, els...))
	}
	return pack(body, tail, plain(r.Text))
}

// userMention is a user mention the core wrote ("<@U123>"), as escape
// leaves it.
var userMention = regexp.MustCompile(`&lt;@([UW][A-Z0-9]+)&gt;`)

// pack splits body blocks over as many messages as it takes to stay
// within the block limit, with the tail (sources, buttons) on the last.
func pack(body, tail []slackapi.Block, text string) []message {
	var out []message
	cur := message{text: truncate(text, maxFallbackText)}
	for _, b := range body {
		if len(cur.blocks) == maxBlocks {
			out = append(out, cur)
			cur = message{text: "(continued)"}
		}
		cur.blocks = append(cur.blocks, b)
	}
	if len(cur.blocks)+len(tail) > maxBlocks {
		out = append(out, cur)
		cur = message{text: "(continued)"}
	}
	cur.blocks = append(cur.blocks, tail...)
	if cur.text == "" {
		cur.text = "docent"
	}
	return append(out, cur)
}

// closestLabel heads the pages an uncertain reply links, as bot/discord
// titles them.
const closestLabel = "*Closest pages*"

// sourceBlocks lists the sources as context blocks, one element each:
// "[n] <url|Title> · Section · updated 2 Jan 2006", after label (mrkdwn)
// when it is not empty.
func sourceBlocks(cites []docent.Citation, stale []bool, label string) []slackapi.Block {
	var out []slackapi.Block
	var els []slackapi.MixedElement
	if label != "" && len(cites) > 0 {
		els = append(els, slackapi.NewTextBlockObject(slackapi.MarkdownType, label, false, false))
	}
	flush := func() {
		if len(els) > 0 {
			out = append(out, slackapi.NewContextBlock("docent_sources_"+strconv.Itoa(len(out)), els...))
			els = nil
		}
	}
	for i, c := range cites {
		if len(els) == maxContextItems {
			flush()
		}
		els = append(els, slackapi.NewTextBlockObject(slackapi.MarkdownType, sourceLine(c, i < len(stale) && stale[i]), false, false))
	}
	flush()
	return out
}

func sourceLine(c docent.Citation, stale bool) string {
	title := escape(truncate(orDefault(c.Title, c.DocID), 200))
	if c.URL != "" {
		title = link(c.URL, title)
	}
	parts := []string{fmt.Sprintf("*[%d]* %s", c.N, title)}
	if c.Section != "" {
		parts = append(parts, escape(truncate(c.Section, 200)))
	}
	if !c.UpdatedAt.IsZero() {
		parts = append(parts, "updated "+c.UpdatedAt.Format("2 Jan 2006"))
	}
	if stale {
		parts = append(parts, ":warning: may be out of date")
	}
	return strings.Join(parts, " · ")
}

// escalation renders a handoff request for the escalation channel: who
// asked and a link to the thread, the group mention, the question, the
// bot's answer with its sources, the state, and the buttons the state
// allows.
func escalation(h docent.Handoff, a docent.Answer, permalink, group string) message {
	head := fmt.Sprintf("<@%s> asked for a person", h.RequestedBy)
	if permalink != "" {
		head += " in " + link(permalink, "this thread")
	}
	head += "."
	if group != "" {
		head = "<!subteam^" + group + "> " + head
	}
	blocks := []slackapi.Block{
		section("docent_esc_head", head),
		section("docent_esc_question", "*Question*\n>"+strings.ReplaceAll(escape(truncate(orDefault(h.Question, "(none)"), maxEscalatedText)), "\n", "\n>")),
	}
	if a.Text != "" {
		blocks = append(blocks, section("docent_esc_answer",
			"*docent answered* ("+statusLabel(a.Status)+")\n"+truncateMrkdwn(mrkdwn(a.Text, a.Citations), maxEscalatedText)))
		label := ""
		if a.Status == docent.StatusUncertain {
			label = closestLabel
		}
		blocks = append(blocks, sourceBlocks(a.Citations, nil, label)...)
	}
	blocks = append(blocks, stateBlocks(h)...)
	text := "Handoff requested: " + truncate(h.Question, 200)
	if group != "" {
		text = "<!subteam^" + group + "> " + text
	}
	return message{text: text, blocks: blocks}
}

// stateBlocks shows a handoff's state and the buttons it allows: Claim
// and Resolve while requested, Resolve once claimed, none when resolved.
func stateBlocks(h docent.Handoff) []slackapi.Block {
	line := fmt.Sprintf(":raising_hand: Requested by <@%s> %s", h.RequestedBy, slackDate(h.RequestedAt))
	var kinds []bot.ActionKind
	switch h.State {
	case docent.HandoffRequested:
		kinds = []bot.ActionKind{bot.ActionClaim, bot.ActionResolve}
	case docent.HandoffClaimed:
		line = fmt.Sprintf(":eyes: Claimed by <@%s> %s after %s", h.ClaimedBy, slackDate(h.ClaimedAt), since(h.RequestedAt, h.ClaimedAt))
		kinds = []bot.ActionKind{bot.ActionResolve}
	case docent.HandoffResolved:
		line = fmt.Sprintf(":white_check_mark: Resolved by <@%s> %s, %s after the request", h.ResolvedBy, slackDate(h.ResolvedAt), since(h.RequestedAt, h.ResolvedAt))
	case docent.HandoffReturned:
		line = fmt.Sprintf(":robot_face: <@%s> returned it to docent %s, %s after the request: no one is needed", h.ResolvedBy,
			slackDate(h.ResolvedAt), since(h.RequestedAt, h.ResolvedAt))
	}
	out := []slackapi.Block{slackapi.NewContextBlock(blockState, slackapi.NewTextBlockObject(slackapi.MarkdownType, line, false, false))}
	if len(kinds) > 0 {
		var els []slackapi.BlockElement
		for _, k := range kinds {
			btn := slackapi.NewButtonBlockElement(actionPrefix+string(k), buttonValue{Handoff: h.ID}.String(),
				slackapi.NewTextBlockObject(slackapi.PlainTextType, buttonLabels[k], false, false))
			if k == bot.ActionClaim {
				btn.Style = slackapi.StylePrimary
			}
			els = append(els, btn)
		}
		out = append(out, slackapi.NewActionBlock(blockEscalated, els...))
	}
	return out
}

// restate replaces the state and buttons of an escalation post's blocks.
func restate(blocks []slackapi.Block, h docent.Handoff) []slackapi.Block {
	var out []slackapi.Block
	for _, b := range blocks {
		if id := b.ID(); id != blockState && id != blockEscalated {
			out = append(out, b)
		}
	}
	return append(out, stateBlocks(h)...)
}

// reasonModal asks why an answer did not help; the reason is optional.
func reasonModal(v buttonValue) slackapi.ModalViewRequest {
	input := slackapi.NewPlainTextInputBlockElement(
		slackapi.NewTextBlockObject(slackapi.PlainTextType, "Outdated, wrong, missing a step…", false, false), actionReason)
	input.Multiline = true
	input.MaxLength = 1000
	block := slackapi.NewInputBlock(blockReason, slackapi.NewTextBlockObject(slackapi.PlainTextType, "What was wrong with it?", false, false), nil, input)
	block.Optional = true
	return slackapi.ModalViewRequest{
		Type:            slackapi.VTModal,
		CallbackID:      callbackReason,
		Title:           slackapi.NewTextBlockObject(slackapi.PlainTextType, "Not helpful", false, false),
		Submit:          slackapi.NewTextBlockObject(slackapi.PlainTextType, "Send", false, false),
		Close:           slackapi.NewTextBlockObject(slackapi.PlainTextType, "Skip", false, false),
		Blocks:          slackapi.Blocks{BlockSet: []slackapi.Block{block}},
		PrivateMetadata: v.String(),
		NotifyOnClose:   true,
	}
}

func section(id, text string) *slackapi.SectionBlock {
	return slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, truncateMrkdwn(text, maxSectionText), false, false),
		nil, nil, slackapi.SectionBlockOptionBlockID(id))
}

func statusLabel(s docent.Status) string {
	switch s {
	case docent.StatusAnswered:
		return "answered"
	case docent.StatusUncertain:
		return "not sure"
	case docent.StatusNotFound:
		return "not in the docs"
	}
	return "failed"
}

// slackDate shows a time in each reader's own time zone.
func slackDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2 Jan 2006 15:04 UTC"))
}

// since is the time from a to b, rounded for people.
func since(a, b time.Time) string {
	d := b.Sub(a)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	}
	return d.Round(time.Minute).String()
}

var (
	mdLink     = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^)\s]+)\)`)
	mdBold     = regexp.MustCompile(`\*\*([^*\n]+)\*\*`)
	mdHeading  = regexp.MustCompile(`(?m)^#{1,6}\s+(.+)$`)
	mdBullet   = regexp.MustCompile(`(?m)^(\s*)[-*]\s+`)
	citeMarker = regexp.MustCompile(`\[(\d+)\]`)
)

// mrkdwn turns an answer's markdown into Slack mrkdwn: &, < and >
// escaped, links and bold in Slack's syntax, headings bold, bullets as
// bullets, and each [n] marker a link to source n.
func mrkdwn(text string, cites []docent.Citation) string {
	s := escape(text)
	s = mdLink.ReplaceAllString(s, "<$2|$1>")
	s = mdHeading.ReplaceAllString(s, "**$1**")
	s = mdBullet.ReplaceAllString(s, "$1• ")
	s = mdBold.ReplaceAllString(s, "*$1*")
	urls := map[int]string{}
	for _, c := range cites {
		urls[c.N] = c.URL
	}
	return citeMarker.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		if u := urls[n]; u != "" {
			return link(u, m)
		}
		return m
	})
}

// link is a mrkdwn link to url showing label (already mrkdwn).
func link(url, label string) string {
	return "<" + strings.ReplaceAll(escape(url), "|", "%7C") + "|" + label + ">"
}

// escape escapes the three characters Slack's mrkdwn reserves.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// plain is the notification text of an answer: its text, escaped.
func plain(s string) string { return escape(s) }

// splitText splits mrkdwn into parts of at most limit characters, at a
// paragraph, line, sentence or word boundary when there is one, never
// inside a <link>.
func splitText(s string, limit int) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var out []string
	for utf8.RuneCountInString(s) > limit {
		cut := byteIndex(s, limit)
		best := -1
		for _, sep := range []string{"\n\n", "\n", ". ", " "} {
			if i := strings.LastIndex(s[:cut], sep); i > cut/2 {
				best = i + len(sep)
				break
			}
		}
		if best < 0 {
			best = cut
		}
		// Never cut inside a link: back up to its "<".
		if open := strings.LastIndex(s[:best], "<"); open > 0 && !strings.Contains(s[open:best], ">") {
			best = open
		}
		out = append(out, strings.TrimSpace(s[:best]))
		s = strings.TrimSpace(s[best:])
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// truncateMrkdwn shortens mrkdwn to limit characters without breaking a
// link, marking the cut with "…".
func truncateMrkdwn(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return splitText(s, limit-1)[0] + "…"
}

// truncate shortens plain text to limit characters, marking the cut.
func truncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return s[:byteIndex(s, limit-1)] + "…"
}

// byteIndex returns the byte offset of the n-th rune of s.
func byteIndex(s string, n int) int {
	i := 0
	for j := range s {
		if i == n {
			return j
		}
		i++
	}
	return len(s)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
