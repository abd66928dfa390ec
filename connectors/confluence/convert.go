package confluence

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Links says where the links of one page point: its wiki and space.
type Links struct {
	// BaseURL is the wiki's base ("https://acme.atlassian.net/wiki", or a
	// Data Center URL); page links are made under it.
	BaseURL string
	// SpaceKey is the page's space, for page links that name none.
	SpaceKey string
}

// Converter turns Confluence storage format (the XHTML-based format pages
// are stored in) into markdown. It is safe for concurrent use.
//
// The storage format is read leniently, the way a browser reads HTML (a
// page is never rejected for its markup), then Confluence's own elements
// are rewritten into plain HTML and html-to-markdown renders the result:
//
//   - code and noformat macros become fenced code blocks with their
//     language;
//   - info, note, tip, warning and panel macros become quotes that start
//     with their kind and title ("**Warning:** Title");
//   - expand macros keep their content under their title in bold;
//   - other macros keep their body, and macros without one (table of
//     contents, child lists, Jira lists) are dropped;
//   - page links become links to the page, user mentions "@name",
//     attachment links their file name, emoticons their fallback text,
//     task lists "[ ]"/"[x]" items, status lozenges their text;
//   - tables stay tables: blocks inside a cell (paragraphs, lists, code)
//     are flattened onto lines joined by <br>, since a markdown table
//     cell holds one line.
type Converter struct {
	conv *converter.Converter
}

// NewConverter returns a Converter.
func NewConverter() *Converter {
	return &Converter{conv: converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(commonmark.WithListEndComment(false)),
		strikethrough.NewStrikethroughPlugin(),
		table.NewTablePlugin(
			table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
			table.WithHeaderPromotion(true),
			table.WithSpanCellBehavior(table.SpanBehaviorMirror),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
		),
	))}
}

// Convert returns the markdown of a page's storage-format body. The
// error is html-to-markdown's, which does not fail on any input today.
func (c *Converter) Convert(storage string, links Links) (string, error) {
	body := Parse(storage)
	rewrite(body, links)
	md, err := c.conv.ConvertNode(body)
	if err != nil {
		return "", fmt.Errorf("confluence: convert: %w", err)
	}
	out := strings.TrimSpace(taskItem.ReplaceAllString(string(md), "$1[$2] "))
	if out == "" {
		return "", nil
	}
	return out + "\n", nil
}

// taskItem is a task list item as html-to-markdown escapes it ("- \\[x] ").
var taskItem = regexp.MustCompile(`(?m)^(\s*- )\\\[([ x])\] `)

// Parse reads storage format into an HTML tree and returns its body.
// Storage format is XML: CDATA sections (the text of code macros) and
// self-closing custom elements (<ri:page ... />) are rewritten to what an
// HTML parser reads the same way, then the HTML parser builds the tree
// (so any input, however broken, gives a tree).
func Parse(storage string) *html.Node {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(storage))
	z.AllowCDATA(true)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			doc, err := html.Parse(strings.NewReader(b.String()))
			if err != nil { // html.Parse fails only when its reader does
				doc = &html.Node{Type: html.DocumentNode}
			}
			if body := findBody(doc); body != nil {
				return body
			}
			body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
			return body
		case html.TextToken:
			b.WriteString(html.EscapeString(string(z.Text())))
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			b.WriteByte('<')
			b.WriteString(tok.Data)
			for _, a := range tok.Attr {
				if !validAttrName(a.Key) {
					continue
				}
				b.WriteByte(' ')
				b.WriteString(a.Key)
				b.WriteString(`="`)
				b.WriteString(html.EscapeString(a.Val))
				b.WriteByte('"')
			}
			b.WriteByte('>')
			if tt == html.SelfClosingTagToken && !voidElements[tok.Data] {
				b.WriteString("</" + tok.Data + ">")
			}
		case html.EndTagToken:
			tok := z.Token()
			b.WriteString("</" + tok.Data + ">")
		}
		// Comments and doctypes are dropped.
	}
}

// validAttrName reports whether an attribute name re-reads as itself.
func validAttrName(k string) bool {
	if k == "" {
		return false
	}
	return !strings.ContainsAny(k, " \t\n\f\r\"'<>/=")
}

var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}

func findBody(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if b := findBody(c); b != nil {
			return b
		}
	}
	return nil
}

// rewrite replaces Confluence's elements under n with plain HTML, bottom
// up: a macro's body is rewritten before the macro.
func rewrite(n *html.Node, links Links) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		rewrite(c, links)
		if c.Type == html.ElementNode {
			rewriteElement(c, links)
		}
		c = next
	}
}

// owners name, for each part of a Confluence element, the elements it is a
// part of: a part is read by its owner, and rewritten on its own only
// where it stands elsewhere.
var owners = map[string][]string{
	"ac:parameter":            {"ac:structured-macro", "ac:macro"},
	"ac:rich-text-body":       {"ac:structured-macro", "ac:macro"},
	"ac:plain-text-body":      {"ac:structured-macro", "ac:macro"},
	"ac:plain-text-link-body": {"ac:link"},
	"ac:link-body":            {"ac:link"},
	"ac:task-id":              {"ac:task"},
	"ac:task-status":          {"ac:task"},
	"ac:task-body":            {"ac:task"},
}

// partOfOwner reports whether n is a part its parent reads.
func partOfOwner(n *html.Node) bool {
	if n.Parent == nil || n.Parent.Type != html.ElementNode {
		return false
	}
	if strings.HasPrefix(n.Data, "ri:") {
		return n.Parent.Data == "ac:link" || n.Parent.Data == "ac:image"
	}
	for _, o := range owners[n.Data] {
		if n.Parent.Data == o {
			return true
		}
	}
	return false
}

func rewriteElement(n *html.Node, links Links) {
	if partOfOwner(n) {
		return
	}
	switch n.Data {
	case "ac:structured-macro", "ac:macro":
		rest := loose(n)
		replace(n, append(macro(n), rest...)...)
	case "ac:link":
		rest := loose(n)
		replace(n, append(link(n, links), rest...)...)
	case "ac:image":
		rest := loose(n)
		if alt := imageText(n); alt != "" {
			rest = append([]*html.Node{text(alt)}, rest...)
		}
		replace(n, rest...)
	case "ac:emoticon":
		emoji := text(firstNonEmpty(attr(n, "ac:emoji-fallback"), attr(n, "ac:emoji-shortname"), ":"+attr(n, "ac:name")+":"))
		replace(n, append([]*html.Node{emoji}, bodyOf(n)...)...)
	case "ac:task-list":
		n.Data, n.DataAtom, n.Attr = "ul", atom.Ul, nil
	case "ac:task":
		mark := "[ ] "
		if strings.EqualFold(strings.TrimSpace(textOf(child(n, "ac:task-status"))), "complete") {
			mark = "[x] "
		}
		li := elem("li", atom.Li)
		li.AppendChild(text(mark))
		rest := loose(n)
		if body := child(n, "ac:task-body"); body != nil {
			moveChildren(li, body)
		}
		for _, c := range rest {
			li.AppendChild(c)
		}
		replace(n, li)
	case "time":
		if d := attr(n, "datetime"); d != "" && n.FirstChild == nil {
			replace(n, text(d))
		}
	case "ac:parameter", "ac:placeholder", "ac:task-id", "ac:task-status", "ac:adf-attribute", "ac:adf-fallback":
		remove(n)
	case "td", "th":
		flattenCell(n)
	default:
		if strings.HasPrefix(n.Data, "ac:") || strings.HasPrefix(n.Data, "ri:") {
			// Layouts, inline comment markers, ADF wrappers, rich-text
			// bodies left over: keep what they hold.
			unwrap(n)
		}
	}
}

// panelKinds are the macros rendered as quotes, with the word they start with.
var panelKinds = map[string]string{
	"info": "Info", "note": "Note", "tip": "Tip", "warning": "Warning", "panel": "",
	"success": "Success", "error": "Error",
}

// dropped are macros whose output is generated, not written on the page.
var dropped = map[string]bool{
	"toc": true, "toc-zone": false, "children": true, "pagetree": true, "pagetreesearch": true,
	"anchor": true, "recently-updated": true, "contentbylabel": true, "attachments": true,
	"livesearch": true, "jira": true, "jiraissues": true, "create-from-template": true,
	"blog-posts": true, "gallery": true, "profile": true, "viewfile": true, "view-file": true,
}

// macro returns the HTML a macro becomes.
func macro(n *html.Node) []*html.Node {
	name := strings.ToLower(attr(n, "ac:name"))
	params := map[string]string{}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "ac:parameter" {
			params[strings.ToLower(attr(c, "ac:name"))] = strings.TrimSpace(textOf(c))
		}
	}
	// A macro has one body of each kind; should it have more, each counts.
	var rich, plain *html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch {
		case c.Data == "ac:rich-text-body" && rich == nil:
			rich = c
		case c.Data == "ac:rich-text-body":
			moveChildren(rich, c)
		case c.Data == "ac:plain-text-body" && plain == nil:
			plain = c
		case c.Data == "ac:plain-text-body":
			plain.AppendChild(text("\n" + textOf(c)))
		}
	}
	var out []*html.Node
	switch {
	case name == "code" || name == "noformat" || (plain != nil && rich == nil):
		if t := params["title"]; t != "" {
			out = append(out, para(strong(t)))
		}
		out = append(out, codeBlock(textOf(plain), codeLanguage(params["language"])))
		if rich != nil {
			out = append(out, bodyOf(rich)...)
		}
		return out
	case panelKinds[name] != "" || name == "panel":
		q := elem("blockquote", atom.Blockquote)
		head := panelKinds[name]
		if t := params["title"]; t != "" {
			if head != "" {
				head += ": " + t
			} else {
				head = t
			}
		} else if head != "" {
			head += ":"
		}
		if head != "" {
			q.AppendChild(para(strong(head)))
		}
		if rich != nil {
			moveChildren(q, rich)
		}
		return []*html.Node{q}
	case name == "expand":
		div := elem("div", atom.Div)
		if t := firstNonEmpty(params["title"], params["0"]); t != "" {
			div.AppendChild(para(strong(t)))
		}
		if rich != nil {
			moveChildren(div, rich)
		}
		return []*html.Node{div}
	case name == "status":
		if t := params["title"]; t != "" {
			out = append(out, strong(t))
		}
		if rich != nil {
			out = append(out, bodyOf(rich)...)
		}
		return out
	case rich != nil:
		return bodyOf(rich)
	case dropped[name]:
		return nil
	}
	return nil
}

// codeLanguage maps Confluence's code macro languages to the names
// markdown renderers know.
func codeLanguage(lang string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	switch lang {
	case "none", "text", "plain":
		return ""
	case "js":
		return "javascript"
	case "py":
		return "python"
	case "shell", "sh":
		return "bash"
	case "c#", "csharp":
		return "csharp"
	}
	if strings.ContainsAny(lang, " `\t\n") {
		return ""
	}
	return lang
}

// link returns what an <ac:link> becomes: a link to a page, a mention, a
// file name, or its text.
func link(n *html.Node, links Links) []*html.Node {
	var body []*html.Node
	label := ""
	if b := child(n, "ac:plain-text-link-body"); b != nil {
		label = textOf(b)
	} else if b := child(n, "ac:link-body"); b != nil {
		body = bodyOf(b)
		label = strings.TrimSpace(textOfAll(body))
	}
	content := func(fallback string) []*html.Node {
		if len(body) > 0 && label != "" {
			return body
		}
		if strings.TrimSpace(label) != "" {
			return []*html.Node{text(label)}
		}
		return []*html.Node{text(fallback)}
	}
	anchor := attr(n, "ac:anchor")
	switch {
	case child(n, "ri:user") != nil:
		u := child(n, "ri:user")
		name := firstNonEmpty(strings.TrimSpace(label), attr(u, "ri:username"), "user")
		return []*html.Node{text("@" + strings.TrimPrefix(name, "@"))}
	case child(n, "ri:page") != nil || child(n, "ri:blog-post") != nil:
		p := child(n, "ri:page")
		if p == nil {
			p = child(n, "ri:blog-post")
		}
		title := attr(p, "ri:content-title")
		space := firstNonEmpty(attr(p, "ri:space-key"), links.SpaceKey)
		nodes := content(title)
		if title == "" || space == "" || links.BaseURL == "" {
			return nodes
		}
		href := strings.TrimRight(links.BaseURL, "/") + "/display/" + url.PathEscape(space) + "/" +
			strings.ReplaceAll(url.QueryEscape(title), "%2F", "/")
		if anchor != "" {
			href += "#" + url.PathEscape(anchor)
		}
		a := elem("a", atom.A)
		a.Attr = []html.Attribute{{Key: "href", Val: href}}
		for _, c := range nodes {
			a.AppendChild(c)
		}
		return []*html.Node{a}
	case child(n, "ri:attachment") != nil:
		return content(attr(child(n, "ri:attachment"), "ri:filename"))
	case child(n, "ri:url") != nil:
		href := attr(child(n, "ri:url"), "ri:value")
		nodes := content(href)
		if !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "https://") {
			return nodes
		}
		a := elem("a", atom.A)
		a.Attr = []html.Attribute{{Key: "href", Val: href}}
		for _, c := range nodes {
			a.AppendChild(c)
		}
		return []*html.Node{a}
	case child(n, "ri:space") != nil:
		return content(attr(child(n, "ri:space"), "ri:space-key"))
	}
	return content(anchor)
}

// imageText is what an image says in text: its alt text, else its file name.
func imageText(n *html.Node) string {
	if alt := attr(n, "ac:alt"); alt != "" {
		return alt
	}
	if a := child(n, "ri:attachment"); a != nil {
		return attr(a, "ri:filename")
	}
	return ""
}

// blockElements end a line inside a table cell.
var blockElements = map[string]bool{
	"p": true, "div": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "li": true, "pre": true, "blockquote": true, "table": true, "thead": true,
	"tbody": true, "tfoot": true, "tr": true, "td": true, "th": true, "hr": true, "section": true,
	"article": true, "header": true, "footer": true, "dl": true, "dt": true, "dd": true, "figure": true,
	"figcaption": true, "details": true, "summary": true, "main": true, "nav": true, "aside": true,
	"address": true, "caption": true, "colgroup": true, "col": true, "center": true, "form": true,
	"fieldset": true, "legend": true, "menu": true, "dir": true, "listing": true, "xmp": true,
	"plaintext": true,
}

// flattenCell rewrites the content of a table cell onto lines joined by
// <br>: each block (paragraph, list item, code line, heading) one line.
func flattenCell(cell *html.Node) {
	var lines [][]*html.Node
	var cur []*html.Node
	flush := func() {
		if len(cur) > 0 && strings.TrimSpace(textOfAll(cur)) != "" {
			lines = append(lines, cur)
		}
		cur = nil
	}
	var walk func(n *html.Node, prefix string)
	walk = func(n *html.Node, prefix string) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			switch {
			case c.Type == html.TextNode || (c.Type == html.ElementNode && !blockElements[c.Data] && c.Data != "br" && !hasBlock(c)):
				if prefix != "" && len(cur) == 0 {
					cur = append(cur, text(prefix))
					prefix = ""
				}
				n.RemoveChild(c)
				cur = append(cur, c)
			case c.Type == html.ElementNode && c.Data == "br":
				flush()
			case c.Type == html.ElementNode && c.Data == "pre":
				flush()
				for _, l := range strings.Split(strings.TrimRight(textOf(c), "\n"), "\n") {
					if strings.TrimSpace(l) == "" {
						continue
					}
					code := elem("code", atom.Code)
					code.AppendChild(text(l))
					lines = append(lines, []*html.Node{code})
				}
			case c.Type == html.ElementNode && (c.Data == "ul" || c.Data == "ol"):
				flush()
				i := 0
				for li := c.FirstChild; li != nil; {
					nextLi := li.NextSibling
					if li.Type == html.ElementNode && li.Data == "li" {
						i++
						mark := "• "
						if c.Data == "ol" {
							mark = fmt.Sprintf("%d. ", i)
						}
						walk(li, mark)
						flush()
					} else {
						tmp := elem("div", atom.Div)
						c.RemoveChild(li)
						tmp.AppendChild(li)
						walk(tmp, "")
					}
					li = nextLi
				}
			case c.Type == html.ElementNode && c.Data == "hr":
				flush()
			case c.Type == html.ElementNode:
				flush()
				walk(c, prefix)
				prefix = ""
				flush()
			}
			c = next
		}
	}
	walk(cell, "")
	flush()
	for c := cell.FirstChild; c != nil; {
		next := c.NextSibling
		cell.RemoveChild(c)
		c = next
	}
	for i, line := range lines {
		if i > 0 {
			cell.AppendChild(elem("br", atom.Br))
		}
		for _, n := range line {
			if n.Parent != nil {
				n.Parent.RemoveChild(n)
			}
			cell.AppendChild(n)
		}
	}
}

// hasBlock reports whether n holds a block element.
func hasBlock(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (blockElements[c.Data] || c.Data == "br" || hasBlock(c)) {
			return true
		}
	}
	return false
}

// Helpers over html.Node.

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// child returns n's first child element called name.
func child(n *html.Node, name string) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == name {
			return c
		}
	}
	return nil
}

// textOf is the text n holds.
func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func textOfAll(ns []*html.Node) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(textOf(n))
	}
	return b.String()
}

// loose detaches and returns n's children that are not parts its owner
// reads (stray text inside a macro or a link): they are kept after it.
func loose(n *html.Node) []*html.Node {
	var out []*html.Node
	seen := map[string]bool{}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type != html.ElementNode || !partOfOwner(c):
			n.RemoveChild(c)
			out = append(out, c)
		case seen[c.Data] && hasText[c.Data]:
			// A second body of the same kind: its content is kept after.
			n.RemoveChild(c)
			out = append(out, bodyOf(c)...)
		default:
			seen[c.Data] = true
		}
		c = next
	}
	return out
}

// hasText are the parts whose text a reader sees.
var hasText = map[string]bool{
	"ac:rich-text-body": true, "ac:plain-text-body": true, "ac:plain-text-link-body": true,
	"ac:link-body": true, "ac:task-body": true,
}

// bodyOf detaches and returns n's children.
func bodyOf(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		n.RemoveChild(c)
		out = append(out, c)
		c = next
	}
	return out
}

func moveChildren(dst, src *html.Node) {
	for _, c := range bodyOf(src) {
		dst.AppendChild(c)
	}
}

// replace puts nodes where n is and removes n.
func replace(n *html.Node, nodes ...*html.Node) {
	p := n.Parent
	if p == nil {
		return
	}
	for _, c := range nodes {
		if c.Parent != nil {
			c.Parent.RemoveChild(c)
		}
		p.InsertBefore(c, n)
	}
	p.RemoveChild(n)
}

// unwrap replaces n with its children.
func unwrap(n *html.Node) { replace(n, bodyOf(n)...) }

func remove(n *html.Node) {
	if n.Parent != nil {
		n.Parent.RemoveChild(n)
	}
}

func elem(tag string, a atom.Atom) *html.Node {
	return &html.Node{Type: html.ElementNode, Data: tag, DataAtom: a}
}

func text(s string) *html.Node { return &html.Node{Type: html.TextNode, Data: s} }

func para(children ...*html.Node) *html.Node {
	p := elem("p", atom.P)
	for _, c := range children {
		p.AppendChild(c)
	}
	return p
}

func strong(s string) *html.Node {
	n := elem("strong", atom.Strong)
	n.AppendChild(text(s))
	return n
}

func codeBlock(body, lang string) *html.Node {
	pre := elem("pre", atom.Pre)
	code := elem("code", atom.Code)
	if lang != "" {
		code.Attr = []html.Attribute{{Key: "class", Val: "language-" + lang}}
	}
	code.AppendChild(text(strings.Trim(body, "\n")))
	pre.AppendChild(code)
	return pre
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
