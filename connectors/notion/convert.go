package notion

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Heading is a heading of a converted page, with the block it came from
// (Notion links to a heading by its block ID).
type Heading struct {
	// Text is the heading's plain text.
	Text string
	// BlockID is the heading block's ID.
	BlockID string
}

// Converted is a page's markdown and its headings.
type Converted struct {
	Markdown string
	Headings []Heading
	// Unsupported counts blocks Notion's API does not expose
	// ("unsupported") or docent does not render.
	Unsupported int
}

// PageLinks resolves what a converted page links to: the web URL and
// title of a page or database by ID ("" when unknown).
type PageLinks func(id string) (url, title string)

// Convert renders blocks (children attached) as markdown:
//
//   - headings, paragraphs with their annotations (bold, italic,
//     strikethrough, code) and links, quotes, dividers;
//   - bulleted, numbered and to-do lists, nested by their children;
//   - toggles and toggleable headings with their content;
//   - code blocks with their language, callouts as quotes starting with
//     their icon, equations as $$ blocks;
//   - tables as markdown tables (the first row the header);
//   - child pages and databases as links (each page is a document of its
//     own), synced blocks and columns as their content, bookmarks and
//     external files as links, captions as text.
//
// Links to uploaded files are left out: Notion signs them for an hour,
// and a link that changes every run would make the page look changed.
func Convert(blocks []*Block, links PageLinks) Converted {
	if links == nil {
		links = func(string) (string, string) { return "", "" }
	}
	w := &writer{links: links}
	w.blocks(blocks, "")
	return Converted{Markdown: w.finish(), Headings: w.headings, Unsupported: w.unsupported}
}

type writer struct {
	b           strings.Builder
	links       PageLinks
	headings    []Heading
	unsupported int
}

// para writes one block of text lines, each with prefix, followed by a
// blank line (carrying the prefix's quote markers).
func (w *writer) para(prefix, text string) {
	text = strings.TrimRight(text, " \n")
	if strings.TrimSpace(text) == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		w.b.WriteString(strings.TrimRight(prefix+line, " "))
		w.b.WriteByte('\n')
	}
	w.b.WriteString(strings.TrimRight(blankPrefix(prefix), " "))
	w.b.WriteByte('\n')
}

// blankPrefix is what a blank line inside prefix's container carries:
// quote markers stay, indentation is kept.
func blankPrefix(prefix string) string { return prefix }

// endQuote ends a quote whose container's lines start with prefix: a
// blank line without the quote's marker, so that a quote that follows is
// a quote of its own.
func (w *writer) endQuote(prefix string) {
	w.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
	if strings.TrimSpace(prefix) == "" {
		w.b.WriteString("\n") // a lazy continuation line cannot join the quote
	}
}

func (w *writer) finish() string {
	// A quote's last blank line (">") before a blank line is noise.
	lines := strings.Split(w.b.String(), "\n")
	kept := lines[:0]
	for i, l := range lines {
		if strings.Trim(l, "> ") == "" && strings.Contains(l, ">") && (i+1 == len(lines) || strings.TrimSpace(lines[i+1]) == "") {
			continue
		}
		kept = append(kept, l)
	}
	out := strings.TrimSpace(multiBlank.ReplaceAllString(strings.Join(kept, "\n"), "\n\n"))
	if out == "" {
		return ""
	}
	return out + "\n"
}

var multiBlank = regexp.MustCompile(`\n(?:[ \t]*\n){2,}`)

// blocks writes a run of sibling blocks inside a container whose lines
// start with prefix (indentation for list children, "> " in quotes).
func (w *writer) blocks(blocks []*Block, prefix string) {
	number := 0
	for _, b := range blocks {
		if b == nil || b.Archived || b.InTrash {
			continue
		}
		if b.Type == "numbered_list_item" {
			number++
		} else {
			number = 0
		}
		w.block(b, prefix, number)
	}
}

func (w *writer) block(b *Block, prefix string, number int) {
	d := b.Data
	switch b.Type {
	case "paragraph", "template":
		w.para(prefix, inline(d.RichText, false))
		w.blocks(b.Children, prefix)
	case "heading_1", "heading_2", "heading_3":
		text := oneLine(inline(d.RichText, false))
		if strings.TrimSpace(text) != "" {
			level := int(b.Type[len(b.Type)-1] - '0')
			w.para(prefix, strings.Repeat("#", level)+" "+text)
			w.headings = append(w.headings, Heading{Text: plain(d.RichText), BlockID: b.ID})
		}
		w.blocks(b.Children, prefix) // a toggleable heading's content
	case "bulleted_list_item", "numbered_list_item", "to_do":
		marker := "- "
		switch b.Type {
		case "numbered_list_item":
			marker = fmt.Sprintf("%d. ", number)
		case "to_do":
			marker = "- [ ] "
			if d.Checked {
				marker = "- [x] "
			}
		}
		indent := strings.Repeat(" ", len(marker))
		text := inline(d.RichText, false)
		if strings.TrimSpace(text) == "" {
			text = "\u200b" // keeps an empty item (and its children) a list item
		}
		lines := strings.Split(text, "\n")
		w.b.WriteString(strings.TrimRight(prefix+marker+lines[0], " ") + "\n")
		for _, l := range lines[1:] {
			w.b.WriteString(strings.TrimRight(prefix+indent+l, " ") + "\n")
		}
		if len(b.Children) > 0 {
			w.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
			w.blocks(b.Children, prefix+indent)
		}
		w.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
	case "toggle":
		w.para(prefix, inline(d.RichText, false))
		w.blocks(b.Children, prefix)
	case "quote":
		w.para(prefix+"> ", inline(d.RichText, false))
		w.blocks(b.Children, prefix+"> ")
		w.endQuote(prefix)
	case "callout":
		text := inline(d.RichText, false)
		if d.Icon != nil && d.Icon.Emoji != "" {
			text = d.Icon.Emoji + " " + text
		}
		w.para(prefix+"> ", text)
		w.blocks(b.Children, prefix+"> ")
		w.endQuote(prefix)
	case "code":
		code := plain(d.RichText)
		fence := "```"
		for strings.Contains(code, fence) {
			fence += "`"
		}
		w.b.WriteString(prefix + fence + codeLanguage(d.Language) + "\n")
		for _, l := range strings.Split(strings.TrimRight(code, "\n"), "\n") {
			w.b.WriteString(prefix + l + "\n")
		}
		w.b.WriteString(prefix + fence + "\n" + strings.TrimRight(prefix, " ") + "\n")
		w.caption(prefix, d.Caption)
	case "equation":
		if e := strings.TrimSpace(d.Expression); e != "" {
			w.para(prefix, "$$"+oneLine(escapeText(e))+"$$")
		}
	case "divider":
		w.b.WriteString(strings.TrimRight(prefix, " ") + "\n" + prefix + "---\n" + strings.TrimRight(prefix, " ") + "\n")
	case "table":
		w.table(b, prefix)
	case "table_row": // outside a table: a line of cells
		var cells []string
		for _, c := range d.Cells {
			cells = append(cells, inline(c, false))
		}
		w.para(prefix, strings.Join(cells, " · "))
	case "child_page":
		url, _ := w.links(b.ID)
		w.para(prefix, link("📄 "+escapeText(d.Title), url))
	case "child_database":
		url, _ := w.links(b.ID)
		w.para(prefix, link("🗂 "+escapeText(d.Title), url))
	case "link_to_page":
		id := d.PageID + d.DatabaseID
		url, title := w.links(id)
		if title != "" {
			w.para(prefix, link("→ "+escapeText(title), url))
		}
	case "synced_block", "column_list", "column":
		w.blocks(b.Children, prefix)
	case "bookmark", "embed", "link_preview":
		text := inline(d.Caption, false)
		if strings.TrimSpace(text) == "" {
			text = escapeText(d.URL)
		}
		w.para(prefix, link(text, d.URL))
	case "image", "video", "file", "pdf", "audio":
		text := inline(d.Caption, false)
		if strings.TrimSpace(text) == "" {
			text = escapeText(d.Name)
		}
		if d.External != nil {
			w.para(prefix, link(text, d.External.URL))
		} else {
			w.para(prefix, text) // uploaded files: signed links that expire
		}
	case "table_of_contents", "breadcrumb":
		// Generated from the page; nothing of its own.
	default: // "unsupported", and types added after the pinned version
		w.unsupported++
		w.para(prefix, inline(d.RichText, false))
		w.blocks(b.Children, prefix)
	}
}

func (w *writer) caption(prefix string, caption []RichText) {
	if text := inline(caption, false); strings.TrimSpace(text) != "" {
		w.para(prefix, "*"+strings.TrimSpace(text)+"*")
	}
}

// table writes a table block's rows as a markdown table: the first row is
// the header (Notion's column header, or the first row of cells when the
// table has none, as markdown needs one).
func (w *writer) table(b *Block, prefix string) {
	var rows [][]string
	width := 0
	for _, r := range b.Children {
		if r == nil || r.Type != "table_row" {
			continue
		}
		var cells []string
		for _, c := range r.Data.Cells {
			cells = append(cells, tableCell(c))
		}
		width = max(width, len(cells))
		rows = append(rows, cells)
	}
	if len(rows) == 0 || width == 0 {
		w.blocks(nonRows(b.Children), prefix)
		return
	}
	line := func(cells []string) {
		for len(cells) < width {
			cells = append(cells, "")
		}
		w.b.WriteString(prefix + "| " + strings.Join(cells, " | ") + " |\n")
	}
	w.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
	line(rows[0])
	w.b.WriteString(prefix + "|" + strings.Repeat(" --- |", width) + "\n")
	for _, r := range rows[1:] {
		line(r)
	}
	w.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
	w.blocks(nonRows(b.Children), prefix)
}

func nonRows(blocks []*Block) []*Block {
	var out []*Block
	for _, b := range blocks {
		if b != nil && b.Type != "table_row" {
			out = append(out, b)
		}
	}
	return out
}

// tableCell is a cell's text on one line, with pipes escaped.
func tableCell(rt []RichText) string {
	s := inline(rt, true)
	s = strings.ReplaceAll(s, "\n", "<br>")
	return strings.TrimSpace(s)
}

// inline renders rich text as markdown: annotations as emphasis, links,
// code spans; inCell escapes pipes too.
func inline(rt []RichText, inCell bool) string {
	var b strings.Builder
	for _, r := range rt {
		text := r.PlainText
		if text == "" {
			continue
		}
		var s string
		if r.Annotations.Code {
			s = codeSpan(text)
		} else {
			s = escapeText(text)
		}
		if inCell {
			s = strings.ReplaceAll(s, "|", `\|`)
		}
		lead, core, trail := splitSpace(s)
		if core == "" {
			b.WriteString(s)
			continue
		}
		if r.Annotations.Strikethrough {
			core = "~~" + core + "~~"
		}
		if r.Annotations.Italic {
			core = "*" + core + "*"
		}
		if r.Annotations.Bold {
			core = "**" + core + "**"
		}
		if r.Href != "" {
			core = link(core, r.Href)
		}
		b.WriteString(lead + core + trail)
	}
	return b.String()
}

// splitSpace splits s into its leading spaces, the rest, and its trailing
// spaces: emphasis markers must touch the text they mark.
func splitSpace(s string) (lead, core, trail string) {
	core = strings.TrimLeftFunc(s, unicode.IsSpace)
	lead = s[:len(s)-len(core)]
	trimmed := strings.TrimRightFunc(core, unicode.IsSpace)
	trail = core[len(trimmed):]
	return lead, trimmed, trail
}

// codeSpan is text as an inline code span, fenced with enough backticks.
func codeSpan(text string) string {
	text = strings.ReplaceAll(text, "\n", " ")
	fence := "`"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	if strings.HasPrefix(text, "`") || strings.HasSuffix(text, "`") {
		return fence + " " + text + " " + fence
	}
	return fence + text + fence
}

// link is [text](url), or text when url is empty or not a web link.
func link(text, url string) string {
	url = strings.TrimSpace(url)
	if url == "" || !(strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "/")) {
		return text
	}
	if strings.HasPrefix(url, "/") {
		url = "https://www.notion.so" + url
	}
	url = strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "\n", "").Replace(url)
	return "[" + text + "](" + url + ")"
}

// escapeText escapes the characters that would make text markdown, and
// markers that would start a block at the start of a line.
func escapeText(s string) string {
	var b strings.Builder
	lineStart := true
	for i, r := range s {
		switch r {
		case '\\', '*', '_', '`', '[', ']', '<', '>', '~', '$':
			b.WriteByte('\\')
		case '#', '-', '+', '=', '|':
			if lineStart {
				b.WriteByte('\\')
			}
		case '.', ')':
			// "1." at a line start would start a numbered list.
			if i > 0 && lineStartDigits(s[:i]) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
		lineStart = r == '\n' || (lineStart && (r == ' ' || r == '\t'))
	}
	return b.String()
}

// lineStartDigits reports whether s ends with a run of digits that starts
// a line.
func lineStartDigits(s string) bool {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) {
		return false
	}
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i == 0 || s[i-1] == '\n'
}

// plain is rich text's plain text.
func plain(rt []RichText) string {
	var b strings.Builder
	for _, r := range rt {
		b.WriteString(r.PlainText)
	}
	return b.String()
}

// oneLine joins a text's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// codeLanguage maps Notion's code languages ("plain text", "c++",
// "javascript") to fence info strings.
func codeLanguage(lang string) string {
	switch lang = strings.ToLower(strings.TrimSpace(lang)); lang {
	case "", "plain text":
		return ""
	case "c++":
		return "cpp"
	case "c#":
		return "csharp"
	case "f#":
		return "fsharp"
	case "shell":
		return "bash"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '`' {
			return '-'
		}
		return r
	}, lang)
}
