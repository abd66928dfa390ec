package discord

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/bwmarrin/discordgo"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
)

// Discord's limits, counted in UTF-16 code units (the strictest reading
// of "characters").
const (
	maxContent     = 2000
	maxDescription = 4096
	maxFieldValue  = 1024
	maxThreadName  = 100
	// maxParts bounds how many messages one reply may take.
	maxParts = 4
	// embedColor is Discord's blurple.
	embedColor = 0x5865F2
)

// length counts text as Discord's limits do.
func length(s string) int { return len(utf16.Encode([]rune(s))) }

// truncate shortens s to at most n units, ending with an ellipsis.
func truncate(s string, n int) string {
	if length(s) <= n {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && length(string(r))+1 > n {
		r = r[:len(r)-1]
	}
	return strings.TrimSpace(string(r)) + "…"
}

var marker = regexp.MustCompile(`\[(\d+)\]`)

// linkCitations renders the [n] markers of an answer as links to their
// sources ("<url>" keeps Discord from adding a preview of its own).
func linkCitations(text string, cites []docent.Citation) string {
	urls := map[string]string{}
	for _, c := range cites {
		if c.URL != "" {
			urls[strconv.Itoa(c.N)] = c.URL
		}
	}
	return marker.ReplaceAllStringFunc(text, func(m string) string {
		n := m[1 : len(m)-1]
		if u, ok := urls[n]; ok {
			return `[\[` + n + `\]](<` + u + `>)`
		}
		return m
	})
}

var link = regexp.MustCompile(`\[\\\[\d+\\\]\]\(<[^>]*>\)`)

// split cuts text into messages of at most max units, preferring
// paragraph, line, sentence and word breaks, and never cutting a link.
func split(text string, max int) []string {
	var out []string
	text = strings.TrimSpace(text)
	for length(text) > max {
		cut := prefixWithin(text, max)
		spans := link.FindAllStringIndex(text[:min(len(text), cut+512)], -1)
		inLink := func(i int) bool {
			for _, s := range spans {
				if i > s[0] && i < s[1] {
					return true
				}
			}
			return false
		}
		best := -1
		for _, sep := range []string{"\n\n", "\n", ". ", " "} {
			for i := strings.LastIndex(text[:cut], sep); i > 0; i = strings.LastIndex(text[:i], sep) {
				if !inLink(i) {
					best = i + len(sep)
					break
				}
			}
			if best > cut/3 {
				break
			}
			best = -1
		}
		if best <= 0 {
			best = cut
			for _, s := range spans {
				if best > s[0] && best < s[1] && s[0] > 0 {
					best = s[0]
				}
			}
		}
		out = append(out, strings.TrimSpace(text[:best]))
		text = strings.TrimSpace(text[best:])
	}
	if text != "" || len(out) == 0 {
		out = append(out, text)
	}
	return out
}

// prefixWithin returns the byte length of the longest prefix of s within
// max units.
func prefixWithin(s string, max int) int {
	n := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max {
			return i
		}
		n += w
	}
	return len(s)
}

// noPings lets a message ping nobody: answer text quotes documents, which
// may say "@everyone".
func noPings() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// pingRole lets a message ping one role and nobody else.
func pingRole(role string) *discordgo.MessageAllowedMentions {
	am := noPings()
	if role != "" {
		am.Roles = []string{role}
	}
	return am
}

// render turns a core reply into the messages to send in thread t: the
// text (split within the content limit, [n] linked), then on the last
// message the sources embed and the buttons.
func (c *Client) render(r bot.Reply, t bot.Thread) []*discordgo.MessageSend {
	text, mentions := r.Text, noPings()
	switch r.Kind {
	case bot.ReplyAnswer, bot.ReplyUncertain:
		text = linkCitations(text, r.Citations)
	case bot.ReplyHandoff:
		if !r.Ephemeral && c.cfg.EscalationRole != "" {
			text = "<@&" + c.cfg.EscalationRole + "> " + text
			mentions = pingRole(c.cfg.EscalationRole)
		}
	}
	chunks := split(text, maxContent)
	if len(chunks) > maxParts {
		chunks = chunks[:maxParts]
		chunks[maxParts-1] = truncate(chunks[maxParts-1], maxContent-40) + "\n*(answer shortened)*"
	}
	parts := make([]*discordgo.MessageSend, len(chunks))
	for i, ch := range chunks {
		parts[i] = &discordgo.MessageSend{Content: ch, AllowedMentions: mentions}
	}
	last := parts[len(parts)-1]
	if e := sourcesEmbed(r); e != nil {
		last.Embeds = []*discordgo.MessageEmbed{e}
	}
	if b := buttons(r, t); b != nil {
		last.Components = b
	}
	return parts
}

// sourcesEmbed lists an answer's sources: number, title › section as a
// link, when it was updated, and a warning on a source flagged stale.
func sourcesEmbed(r bot.Reply) *discordgo.MessageEmbed {
	if len(r.Citations) == 0 {
		return nil
	}
	title := "Sources"
	if r.Kind == bot.ReplyUncertain {
		title = "Closest pages"
	}
	var b strings.Builder
	for i, c := range r.Citations {
		line := sourceLine(c, i < len(r.Stale) && r.Stale[i])
		if length(b.String())+length(line)+40 > maxDescription {
			fmt.Fprintf(&b, "…and %d more", len(r.Citations)-i)
			break
		}
		b.WriteString(line + "\n")
	}
	return &discordgo.MessageEmbed{Title: title, Color: embedColor, Description: strings.TrimSpace(b.String())}
}

// sourceLine is one source: "`[1]` [Title › Section](url) · updated 2 May 2025".
func sourceLine(c docent.Citation, stale bool) string {
	name := truncate(escape(c.Title), 200)
	if c.Section != "" {
		name += " › " + truncate(escape(c.Section), 200)
	}
	if c.URL != "" {
		name = "[" + name + "](" + c.URL + ")"
	}
	line := fmt.Sprintf("`[%d]` %s", c.N, name)
	if !c.UpdatedAt.IsZero() {
		line += " · updated " + c.UpdatedAt.UTC().Format("2 Jan 2006")
	}
	if stale {
		line += " · ⚠️ **may be out of date**"
	}
	return line
}

// escape keeps Markdown in a title from formatting (or breaking a link).
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `[`, `\[`, `]`, `\]`,
		`|`, `\|`, `>`, `\>`, "\n", " ").Replace(s)
}

// Custom IDs name the action, the turn or handoff it acts on, and the
// conversation's root ("docent:helpful:42:1234..."), so that a button
// works whatever message it is on.
const idPrefix = "docent"

func customID(kind bot.ActionKind, id int64, root string) string {
	s := idPrefix + ":" + string(kind) + ":" + strconv.FormatInt(id, 10)
	if root != "" {
		s += ":" + root
	}
	return s
}

// parseCustomID reads a custom ID back.
func parseCustomID(s string) (kind bot.ActionKind, id int64, root string, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != idPrefix {
		return "", 0, "", false
	}
	n, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || n < 0 {
		return "", 0, "", false
	}
	if len(parts) == 4 {
		root = parts[3]
	}
	switch k := bot.ActionKind(parts[1]); k {
	case bot.ActionHelpful, bot.ActionNotHelpful, bot.ActionHandoff, bot.ActionClaim, bot.ActionResolve, bot.ActionResume:
		return k, n, root, true
	}
	return "", 0, "", false
}

// buttons are a reply's actions as one row of buttons.
func buttons(r bot.Reply, t bot.Thread) []discordgo.MessageComponent {
	if len(r.Buttons) == 0 {
		return nil
	}
	var row discordgo.ActionsRow
	for _, k := range r.Buttons {
		b := discordgo.Button{CustomID: customID(k, r.TurnID, t.ID)}
		if k == bot.ActionResume {
			b.CustomID = customID(k, r.HandoffID, t.ID)
		}
		switch k {
		case bot.ActionHelpful:
			b.Label, b.Style, b.Emoji = "Helpful", discordgo.SuccessButton, &discordgo.ComponentEmoji{Name: "👍"}
		case bot.ActionNotHelpful:
			b.Label, b.Style, b.Emoji = "Not helpful", discordgo.SecondaryButton, &discordgo.ComponentEmoji{Name: "👎"}
		case bot.ActionHandoff:
			b.Label, b.Style, b.Emoji = "Get a human", discordgo.PrimaryButton, &discordgo.ComponentEmoji{Name: "🙋"}
		case bot.ActionResume:
			b.Label, b.Style, b.Emoji = "Bring docent back", discordgo.SecondaryButton, &discordgo.ComponentEmoji{Name: "🤖"}
		default:
			continue
		}
		row.Components = append(row.Components, b)
	}
	return []discordgo.MessageComponent{row}
}

// escalation is the staff-channel post for a handoff: who is pinged, a
// link to the thread, the question, the bot's answer and sources, the
// state with its timings, and Claim / Resolve.
func (c *Client) escalation(h docent.Handoff, a *docent.Answer, link string) *discordgo.MessageSend {
	var b strings.Builder
	fmt.Fprintf(&b, "**Question**\n%s\n", quote(truncate(h.Question, 1200)))
	if a != nil && a.Text != "" {
		fmt.Fprintf(&b, "\n**docent answered** (%s)\n%s\n", a.Status, quote(truncate(linkCitations(a.Text, a.Citations), 1800)))
	}
	e := &discordgo.MessageEmbed{
		Title:       truncate(fmt.Sprintf("Handoff #%d · %s", h.ID, h.State), 256),
		URL:         link,
		Color:       stateColor(h.State),
		Description: strings.TrimSpace(b.String()),
		Footer:      &discordgo.MessageEmbedFooter{Text: "docent handoff " + strconv.FormatInt(h.ID, 10)},
	}
	if a != nil && len(a.Citations) > 0 {
		var s strings.Builder
		for i, cite := range a.Citations {
			line := sourceLine(cite, false)
			if length(s.String())+length(line)+20 > maxFieldValue {
				fmt.Fprintf(&s, "…and %d more", len(a.Citations)-i)
				break
			}
			s.WriteString(line + "\n")
		}
		e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: "Sources", Value: strings.TrimSpace(s.String())})
	}
	if h.RequestedBy != "" {
		e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: "Asked by", Value: "<@" + h.RequestedBy + ">", Inline: true})
	}
	e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: "State", Value: stateLine(h), Inline: true})

	content := "A person is needed in " + link
	if c.cfg.EscalationRole != "" {
		content = "<@&" + c.cfg.EscalationRole + "> " + content
	}
	row := discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: "Claim", Style: discordgo.PrimaryButton, CustomID: customID(bot.ActionClaim, h.ID, ""),
			Disabled: h.State != docent.HandoffRequested},
		discordgo.Button{Label: "Resolve", Style: discordgo.SuccessButton, CustomID: customID(bot.ActionResolve, h.ID, ""),
			Disabled: !h.State.Open()},
		discordgo.Button{Label: "Open thread", Style: discordgo.LinkButton, URL: link},
	}}
	return &discordgo.MessageSend{Content: content, Embeds: []*discordgo.MessageEmbed{e},
		Components: []discordgo.MessageComponent{row}, AllowedMentions: pingRole(c.cfg.EscalationRole)}
}

// stateLine says where a handoff stands and how long each step took.
func stateLine(h docent.Handoff) string {
	switch h.State {
	case docent.HandoffClaimed:
		return fmt.Sprintf("Claimed by <@%s> after %s", h.ClaimedBy, since(h.RequestedAt, h.ClaimedAt))
	case docent.HandoffResolved:
		s := fmt.Sprintf("Resolved by <@%s> after %s", h.ResolvedBy, since(h.RequestedAt, h.ResolvedAt))
		if !h.ClaimedAt.IsZero() {
			s += fmt.Sprintf(" (claimed after %s)", since(h.RequestedAt, h.ClaimedAt))
		}
		return s
	case docent.HandoffReturned:
		return fmt.Sprintf("Returned to docent by <@%s> after %s: no one is needed", h.ResolvedBy, since(h.RequestedAt, h.ResolvedAt))
	}
	return fmt.Sprintf("Waiting since <t:%d:R>", h.RequestedAt.Unix())
}

func since(from, to time.Time) string {
	d := to.Sub(from)
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

func stateColor(s docent.HandoffState) int {
	switch s {
	case docent.HandoffClaimed:
		return 0xFEE75C
	case docent.HandoffResolved, docent.HandoffReturned:
		return 0x57F287
	}
	return 0xED4245
}

// quote renders text as a Markdown block quote.
func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n> ")
}

// threadName names the thread an answer starts: the question's first line.
func threadName(question string) string {
	q, _, _ := strings.Cut(strings.TrimSpace(question), "\n")
	if q == "" {
		q = "Question for docent"
	}
	return truncate(q, maxThreadName-1)
}
