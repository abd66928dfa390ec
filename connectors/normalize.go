package connectors

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Includer reads another file of the same source for an include
// directive: name is a slash path relative to the source's root. It
// returns an error wrapping fs.ErrNotExist for a file that is not there.
type Includer func(name string) ([]byte, error)

// maxIncludeDepth bounds nested includes (a file that includes a file
// that includes ...); deeper directives are dropped as missing.
const maxIncludeDepth = 8

// maxIncludedBytes bounds what one document may grow to through its
// includes, so that an include cycle the stack misses, or a page that
// includes a huge generated file many times, cannot blow up a sync.
const maxIncludedBytes = 8 << 20

// Normalize turns the body of a markdown document written for a static-site
// generator (Hugo, Jekyll, MkDocs with Material and pymdownx, Docusaurus
// and MDX, GitHub) into the plain CommonMark the chunker reads, and reports
// what it changed. path is the document's slash path in its source (for
// resolving includes); read, when not nil, reads the files include
// directives name.
//
// What it does, outside fenced code (which is kept verbatim):
//
//   - Includes are expanded from files of the same source, before anything
//     else and inside code blocks too, as the generators do: MkDocs
//     snippets ("--8<-- "file"", also the block form and line ranges),
//     {% include-markdown "file" %} and {% include "file" %}, Jekyll's
//     {% include file %} (from _includes/) and {% include_relative file %},
//     and MDX partials (an import of a .md or .mdx file used as
//     <Partial />). A path is tried against the including file's folder,
//     the source root, and then with its leading folders dropped one by
//     one (snippet paths are relative to a base folder docent does not
//     know). The directive's indentation is kept on every included line.
//     A target that cannot be read is dropped and listed in Missing.
//
//   - Admonitions become prose: MkDocs "!!! type "Title"" and collapsible
//     "??? type", whose bodies are indented four spaces (an indented code
//     block in CommonMark), pymdownx "/// type | Title" blocks, Docusaurus
//     ":::type Title" containers and GitHub's "> [!NOTE]" alerts. The
//     title (or the type, when there is none) becomes a bold line and the
//     body is de-indented and normalised in turn. Content tabs
//     ("=== "Docker"") are handled the same way, the label as the line.
//
//   - Markup that is not text is removed: HTML comments, MDX {/* */}
//     comments, MDX import and export statements, attribute lists
//     ("{: .subtitle }", "{ width="300" }" after an image or link), and
//     kramdown's "{:toc}". A heading's attribute list keeps only its id,
//     as "{#id}", which the chunker turns into the heading's deep link.
//
//   - Shortcodes and components: Hugo {{< x >}} / {{% x %}}, Liquid and
//     Jinja {% tag %} / {{ variable }}, and JSX components (<Tabs>,
//     <TabItem label="...">). One with inner text (a closing tag follows)
//     keeps its text, and its title or label, when it has one, as a bold
//     line; one without is removed and counted in Dropped. Hugo's
//     {{< highlight go >}} and Liquid's {% highlight go %} become fenced
//     code, {% raw %} keeps its content verbatim, {% comment %} drops it,
//     and {{< ref "x" >}} links keep their target. Wrapper HTML (<div>,
//     <details>, <summary>, <span>, <br>, <img> with its alt text, ...)
//     is removed around the text it holds.
//
//   - Footnotes: each note's text goes in brackets to its first
//     reference ("[^5]"), and its definition ("[^5]: text") leaves the
//     page (see footnotes.go).
//
// Normalize never fails: markup it does not recognise is left as written.
func Normalize(path, body string, read Includer) (string, docent.Normalized) {
	n := &normalizer{read: read}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = n.includes(path, body, []string{path})
	body = n.partials(path, body)
	lines := strings.Split(body, "\n")
	lines = dropStatements(lines)
	lines = n.prose(lines)
	lines = footnotes(lines)
	out := n.blocks(lines)
	text := collapseBlank(strings.Join(out, "\n"))
	return text, n.notes
}

type normalizer struct {
	read  Includer
	notes docent.Normalized
	grown int // bytes added by includes
}

func (n *normalizer) drop(k int) { n.notes.Dropped += k }

func (n *normalizer) included(p string) {
	if !slices.Contains(n.notes.Included, p) {
		n.notes.Included = append(n.notes.Included, p)
	}
}

func (n *normalizer) missing(p string) {
	if !slices.Contains(n.notes.Missing, p) {
		n.notes.Missing = append(n.notes.Missing, p)
	}
}

// ---- includes ----

var (
	// snippetRE is a MkDocs snippet line: --8<-- "file" (an escaped
	// ";--8<--" is not). The block form is a bare --8<-- line.
	snippetRE = regexp.MustCompile(`^(\s*)--8<--\s*(?:"([^"]*)"|'([^']*)')\s*$`)
	// snippetEscapeRE is an escaped snippet line, shown as written.
	snippetEscapeRE = regexp.MustCompile(`^(\s*);(--8<--.*)$`)
	// snippetBlockRE opens and closes the block form.
	snippetBlockRE = regexp.MustCompile(`^(\s*)--8<--\s*$`)
	// includeTagRE is a Liquid or Jinja include tag on its own line:
	// {% include-markdown "file" ... %}, {% include "file" %}, Jekyll's
	// {% include file.md key=value %} and {% include_relative file %}.
	includeTagRE = regexp.MustCompile(`^(\s*)\{%-?\s*(include-markdown|include_relative|include)\s+(?:"([^"]*)"|'([^']*)'|([^\s%]+))([^%]*)-?%\}\s*$`)
	// includeOptRE finds the start and end options of include-markdown.
	includeOptRE = regexp.MustCompile(`\b(start|end)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')`)
)

// includeDirective is one include found on a line.
type includeDirective struct {
	indent string
	kind   string // "snippet", "include-markdown", "include", "include_relative"
	target string
	opts   string
}

// parseInclude returns the include directive on line, if any.
func parseInclude(line string) (includeDirective, bool) {
	if m := snippetRE.FindStringSubmatch(line); m != nil {
		return includeDirective{indent: m[1], kind: "snippet", target: m[2] + m[3]}, true
	}
	if m := includeTagRE.FindStringSubmatch(line); m != nil {
		return includeDirective{indent: m[1], kind: m[2], target: m[3] + m[4] + m[5], opts: m[6]}, true
	}
	return includeDirective{}, false
}

// includes expands the include directives of body (the file at from),
// recursively; stack holds the files being expanded, for cycles.
func (n *normalizer) includes(from, body string, stack []string) string {
	if !strings.Contains(body, "--8<--") && !strings.Contains(body, "include") {
		return body
	}
	lines := strings.Split(body, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	raw := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.Contains(trimmed, "{%") && liquidRawRE.MatchString(trimmed) {
			raw = !strings.Contains(trimmed, "endraw")
		}
		if raw {
			out = append(out, line)
			continue
		}
		if f := search.FenceOpen(line); f != "" && fence == "" {
			fence = f
		} else if fence != "" && search.ClosesFence(line, fence) {
			fence = ""
		}
		if m := snippetBlockRE.FindStringSubmatch(line); m != nil {
			// --8<-- / one file per line / --8<--
			end := -1
			for j := i + 1; j < len(lines); j++ {
				if snippetBlockRE.MatchString(lines[j]) {
					end = j
					break
				}
			}
			if end > 0 {
				for _, l := range lines[i+1 : end] {
					t := strings.TrimSpace(l)
					if t == "" || strings.HasPrefix(t, ";") {
						continue
					}
					out = append(out, n.expand(from, includeDirective{indent: m[1], kind: "snippet", target: t}, stack, fence != "", l)...)
				}
				i = end
				continue
			}
		}
		d, ok := parseInclude(line)
		if !ok {
			if m := snippetEscapeRE.FindStringSubmatch(line); m != nil {
				line = m[1] + m[2] // ";--8<--" shows the directive itself
			}
			out = append(out, line)
			continue
		}
		out = append(out, n.expand(from, d, stack, fence != "", line)...)
	}
	return strings.Join(out, "\n")
}

// expand returns the lines directive d (written as line) stands for.
func (n *normalizer) expand(from string, d includeDirective, stack []string, inCode bool, line string) []string {
	target, first, last := splitLineRange(d.target)
	content, name, ok := n.load(from, target, d.kind)
	if !ok || len(stack) > maxIncludeDepth || slices.Contains(stack, name) || n.grown+len(content) > maxIncludedBytes {
		// The generators drop a directive they cannot expand (pymdownx
		// without check_paths), inside code too: docs that show one
		// escape it (";--8<--").
		n.missing(target)
		return nil
	}
	n.included(name)
	text := string(bytes.TrimPrefix(content, []byte("\ufeff")))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".mdx") || strings.HasSuffix(name, ".markdown") {
		if _, body, ok := cutFrontMatter(text); ok {
			text = body
		}
	}
	if d.kind == "include-markdown" || d.kind == "include" {
		text = markedRange(text, d.opts)
	}
	if first > 0 {
		ls := strings.Split(text, "\n")
		lo, hi := min(first, len(ls)+1)-1, len(ls)
		if last > 0 {
			hi = min(last, len(ls))
		}
		text = strings.Join(ls[lo:max(lo, hi)], "\n")
	}
	text = strings.TrimRight(text, "\n")
	n.grown += len(text)
	text = n.includes(name, text, append(slices.Clone(stack), name))
	ls := strings.Split(text, "\n")
	for i, l := range ls {
		if l != "" {
			ls[i] = d.indent + l
		}
	}
	return ls
}

// splitLineRange parses a snippet's "file.md:3:9" (lines 3 to 9) or
// "file.md:3" (from line 3); first is 0 for none.
func splitLineRange(t string) (target string, first, last int) {
	parts := strings.Split(t, ":")
	if len(parts) >= 2 {
		a, errA := strconv.Atoi(parts[1])
		if errA == nil && a > 0 {
			b := 0
			if len(parts) >= 3 {
				b, _ = strconv.Atoi(parts[2])
			}
			return parts[0], a, b
		}
	}
	return t, 0, 0
}

// markedRange keeps the part of text between include-markdown's start and
// end markers, when the options name them.
func markedRange(text, opts string) string {
	for _, m := range includeOptRE.FindAllStringSubmatch(opts, -1) {
		marker := strings.ReplaceAll(m[2]+m[3], `\"`, `"`)
		if marker == "" {
			continue
		}
		i := strings.Index(text, marker)
		if i < 0 {
			continue
		}
		if m[1] == "start" {
			text = text[i+len(marker):]
		} else {
			text = text[:i]
		}
	}
	return text
}

// load reads an include target, trying the places it may be relative to.
func (n *normalizer) load(from, target, kind string) ([]byte, string, bool) {
	if n.read == nil {
		return nil, "", false
	}
	for _, c := range includeCandidates(from, target, kind) {
		b, err := n.read(c)
		if err == nil {
			return b, c, true
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// A link, a folder, a file that cannot be read: not an include.
			continue
		}
	}
	return nil, "", false
}

// includeCandidates lists, in order, the slash paths an include target of
// the file at from may name: Jekyll's _includes folders, relative to from's
// folder, to each folder above it and the source root, then with leading
// folders dropped.
// Paths that leave the root are left out.
func includeCandidates(from, target, kind string) []string {
	target = strings.TrimSpace(target)
	if target == "" || strings.Contains(target, "://") {
		return nil
	}
	dir := path.Dir(from)
	var out []string
	add := func(p string) {
		p = path.Clean(p)
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
			return
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	rel := strings.TrimPrefix(target, "/")
	if kind == "include" && !strings.HasPrefix(target, ".") && !strings.Contains(target, "/") && path.Ext(target) != "" {
		// Jekyll: {% include file.md %} reads _includes/file.md.
		for d := dir; ; d = path.Dir(d) {
			add(path.Join(d, "_includes", rel))
			if d == "." || d == "/" {
				break
			}
		}
	}
	if !strings.HasPrefix(target, "/") {
		add(path.Join(dir, target))
	}
	// The generator's docs folder may be any folder above the page.
	for d := path.Dir(dir); d != "." && d != "/" && dir != "."; d = path.Dir(d) {
		add(path.Join(d, rel))
	}
	add(rel)
	segs := strings.Split(path.Clean(rel), "/")
	for i := 1; i < len(segs); i++ {
		add(strings.Join(segs[i:], "/"))
	}
	return out
}

// ---- MDX partials ----

var (
	// mdxImportRE is an MDX import of a markdown partial:
	// import Name from './_partial.mdx';
	mdxImportRE = regexp.MustCompile(`^import\s+([A-Z][\w]*)\s+from\s+["']([^"']+\.mdx?)["'];?\s*$`)
)

// partials expands MDX partials: <Name /> where Name was imported from a
// markdown file of the source.
func (n *normalizer) partials(from, body string) string {
	if n.read == nil || !strings.Contains(body, "import ") {
		return body
	}
	names := map[string]string{}
	for _, l := range strings.Split(body, "\n") {
		if m := mdxImportRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			names[m[1]] = m[2]
		}
	}
	if len(names) == 0 {
		return body
	}
	lines := strings.Split(body, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for _, l := range lines {
		if f := search.FenceOpen(l); f != "" && fence == "" {
			fence = f
			out = append(out, l)
			continue
		} else if fence != "" {
			if search.ClosesFence(l, fence) {
				fence = ""
			}
			out = append(out, l)
			continue
		}
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "<") && strings.HasSuffix(t, "/>") {
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "<"), "/>"))
			if target, ok := names[name]; ok {
				indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
				out = append(out, n.expand(from, includeDirective{indent: indent, kind: "partial", target: target}, []string{from}, false, l)...)
				continue
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// ---- fences ----

// ---- blocks ----

var (
	// admonitionRE is a MkDocs admonition or collapsible block:
	// !!! type "Title", ??? type, ???+ type inline end "Title".
	admonitionRE = regexp.MustCompile(`^(\s*)(?:!!!|\?\?\?\+?)(?:\s+([\w-]+))?((?:\s+inline(?:\s+end)?)?)(?:\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)'))?\s*$`)
	// tabRE is a content tab: === "Label" (===! and ===+ too).
	tabRE = regexp.MustCompile(`^(\s*)===[!+]?\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\s*$`)
	// blockRE opens a pymdownx block: /// type | Title; a bare /// closes.
	blockRE      = regexp.MustCompile(`^(\s*)(/{3,})\s*([\w-]+)(?:\s*\|\s*(.*?))?\s*$`)
	blockCloseRE = regexp.MustCompile(`^\s*(/{3,})\s*$`)
	// containerRE opens a Docusaurus container: :::type Title or
	// :::type[Title]; a bare ::: closes.
	containerRE      = regexp.MustCompile(`^(\s*)(:{3,})\s*([\w-]+)(?:\[(.*)\]|\s+(.*?))?\s*(?:\{[^}]*\})?\s*$`)
	containerCloseRE = regexp.MustCompile(`^\s*(:{3,})\s*$`)
	// alertRE is GitHub's alert marker line inside a quote.
	alertRE = regexp.MustCompile(`^(\s*>\s*)\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*$`)
	// attrLineRE is a line holding only an attribute list.
	attrLineRE = regexp.MustCompile(`^\s*\{:?\s*(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+)|:?toc|:\w+[^}]*)(?:\s+(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+)))*\s*\}\s*$`)
	// mdxStatementRE is an MDX import or export statement.
	mdxStatementRE = regexp.MustCompile(`^(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?["'][^"']+["'];?\s*$|export\s+(?:default\s+|const\s+|let\s+|var\s+|function\s+|\{))`)
	// liquidRawRE is {% raw %} or {% endraw %}.
	liquidRawRE = regexp.MustCompile(`^\{%-?\s*(?:end)?raw\s*-?%\}$`)
)

// blocks normalises lines, recursing into admonition and tab bodies.
func (n *normalizer) blocks(lines []string) []string {
	var out []string
	containers := matchOpeners(lines, containerRE, containerCloseRE)
	pblocks := matchOpeners(lines, blockRE, blockCloseRE)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		// Fenced code: verbatim.
		if f := search.FenceOpen(line); f != "" {
			j := i + 1
			for j < len(lines) && !search.ClosesFence(lines[j], f) {
				j++
			}
			end := min(j, len(lines)-1)
			out = append(out, lines[i:end+1]...)
			i = end
			continue
		}
		if m := admonitionRE.FindStringSubmatch(line); m != nil && (m[2] != "" || m[4] != "" || m[5] != "") {
			title, explicit := m[4]+m[5], m[4] != "" || m[5] != "" || strings.Contains(line, `""`)
			if !explicit {
				title = capitalize(m[2])
			}
			body, next := indentedBody(lines, i+1, m[1])
			out = n.emitBlock(out, m[1], strings.ReplaceAll(title, `\"`, `"`), body)
			i = next - 1
			continue
		}
		if m := tabRE.FindStringSubmatch(line); m != nil {
			body, next := indentedBody(lines, i+1, m[1])
			out = n.emitBlock(out, m[1], strings.ReplaceAll(m[2]+m[3], `\"`, `"`), body)
			i = next - 1
			continue
		}
		if m := containerRE.FindStringSubmatch(line); m != nil {
			if end, ok := containers[i]; ok {
				title := strings.TrimSpace(m[4] + m[5])
				if title == "" {
					title = capitalize(m[3])
				}
				out = n.emitBlock(out, m[1], title, dedent(lines[i+1:end], m[1]))
				i = end
				continue
			}
		}
		if m := blockRE.FindStringSubmatch(line); m != nil {
			if end, ok := pblocks[i]; ok {
				title := strings.TrimSpace(m[4])
				if title == "" && m[3] != "html" && m[3] != "attrs" {
					title = capitalize(m[3])
				}
				out = n.emitBlock(out, m[1], title, dedent(lines[i+1:end], m[1]))
				i = end
				continue
			}
		}
		if m := alertRE.FindStringSubmatch(line); m != nil {
			out = append(out, m[1]+"**"+capitalize(strings.ToLower(m[2]))+"**")
			continue
		}
		if attrLineRE.MatchString(line) {
			if strings.Contains(line, "toc") && len(out) > 0 {
				// kramdown's table of contents: "* TOC" then "{:toc}".
				if l := strings.TrimSpace(out[len(out)-1]); l == "* TOC" || l == "- TOC" || l == "1. TOC" {
					out = out[:len(out)-1]
				}
			}
			continue
		}
		out = append(out, line)
	}
	return out
}

// bracketDepth is how many (, { and [ line opens that it does not close.
func bracketDepth(line string) int {
	d := 0
	for _, c := range line {
		switch c {
		case '(', '{', '[':
			d++
		case ')', '}', ']':
			d--
		}
	}
	return d
}

// continues reports whether a statement's line asks for another: it ends
// with an arrow, an operator or an opening bracket.
func continues(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasSuffix(t, "=>") || strings.HasSuffix(t, "=") || strings.HasSuffix(t, "(") ||
		strings.HasSuffix(t, "{") || strings.HasSuffix(t, "[") || strings.HasSuffix(t, ",")
}

// dropStatements removes MDX import and export statements outside fenced
// code: an export's brackets may span lines.
func dropStatements(lines []string) []string {
	out := lines[:0:0]
	fence := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence != "" {
			if search.ClosesFence(line, fence) {
				fence = ""
			}
			out = append(out, line)
			continue
		}
		if f := search.FenceOpen(line); f != "" {
			fence = f
			out = append(out, line)
			continue
		}
		if (strings.HasPrefix(line, "import") || strings.HasPrefix(line, "export")) && mdxStatementRE.MatchString(line) {
			depth := bracketDepth(line)
			for i+1 < len(lines) && (depth > 0 || continues(lines[i])) && strings.TrimSpace(lines[i+1]) != "" {
				i++
				depth += bracketDepth(lines[i])
			}
			continue
		}
		out = append(out, line)
	}
	return out
}

// emitBlock writes an admonition, tab or container: its title as a bold
// line and its normalised body, at indent.
func (n *normalizer) emitBlock(out []string, indent, title string, body []string) []string {
	if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) != "" {
		out = append(out, "")
	}
	if t := strings.TrimSpace(title); t != "" {
		out = append(out, indent+"**"+t+"**", "")
	}
	for _, l := range n.blocks(body) {
		if l == "" {
			out = append(out, "")
		} else {
			out = append(out, indent+l)
		}
	}
	return append(out, "")
}

// indentedBody returns the lines from start indented at least four
// spaces (or a tab) past indent, with blank lines between them,
// de-indented, and the index of the first line after the body.
func indentedBody(lines []string, start int, indent string) ([]string, int) {
	var body []string
	end := start
	for j := start; j < len(lines); j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			body = append(body, "")
			continue
		}
		rest, ok := strings.CutPrefix(l, indent)
		if !ok {
			break
		}
		switch {
		case strings.HasPrefix(rest, "    "):
			rest = rest[4:]
		case strings.HasPrefix(rest, "\t"):
			rest = rest[1:]
		default:
			ok = false
		}
		if !ok {
			break
		}
		body = append(body, rest)
		end = j + 1
	}
	return body[:max(0, min(len(body), end-start))], end
}

// matchOpeners pairs the lines that open a block (openRE, a run of
// markers as its second group) with the lines that close one (closeRE, the
// run as its first group), outside fenced code, in one pass: a closer ends
// the innermost open block whose run it is at least as long as. It returns
// opener index -> closer index; an opener never closed is left out.
func matchOpeners(lines []string, openRE, closeRE *regexp.Regexp) map[int]int {
	out := map[int]int{}
	type open struct{ line, width int }
	var stack []open
	fence := ""
	for j, l := range lines {
		if fence != "" {
			if search.ClosesFence(l, fence) {
				fence = ""
			}
			continue
		}
		if f := search.FenceOpen(l); f != "" {
			fence = f
			continue
		}
		if m := closeRE.FindStringSubmatch(l); m != nil {
			for k := len(stack) - 1; k >= 0; k-- {
				if len(m[1]) >= stack[k].width {
					out[stack[k].line] = j
					stack = stack[:k]
					break
				}
			}
			continue
		}
		if m := openRE.FindStringSubmatch(l); m != nil {
			stack = append(stack, open{j, len(m[2])})
		}
	}
	return out
}

// dedent removes indent from the start of every line that has it.
func dedent(lines []string, indent string) []string {
	if indent == "" {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, indent)
	}
	return out
}

// capitalize upper-cases the first letter of s and turns dashes into spaces.
func capitalize(s string) string {
	s = strings.ReplaceAll(s, "-", " ")
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// collapseBlank trims trailing spaces of blank lines and keeps at most one
// blank line in a row outside fenced code.
func collapseBlank(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := 0
	fence := ""
	for _, l := range lines {
		if fence != "" {
			if search.ClosesFence(l, fence) {
				fence = ""
			}
			out = append(out, l)
			continue
		}
		if f := search.FenceOpen(l); f != "" {
			fence = f
		}
		if strings.TrimSpace(l) == "" {
			blank++
			if blank > 1 {
				continue
			}
			l = ""
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.TrimLeft(strings.Join(out, "\n"), "\n"), " \t\n") + "\n"
}

// ---- prose: comments, tags, shortcodes, components ----

// cut marks where markup was removed; lines left holding only cuts and
// spaces are dropped whole, so that a removed tag line does not split a
// paragraph or end a list.
const cut = "\x00"

// cutBlock marks a removed tag that stood between blocks (a paired
// shortcode or component, a Liquid block tag): a line left holding only
// such marks becomes a blank line, so the text on either side stays apart.
const cutBlock = "\x01"

// edit replaces src[start:end].
type edit struct {
	start, end int
	repl       string
}

var (
	htmlCommentRE = regexp.MustCompile(`(?s)<!--.*?(?:-->|\z)`)
	mdxCommentRE  = regexp.MustCompile(`(?s)\{/\*.*?\*/\}`)
	// liquidTagRE is a Liquid or Jinja tag {% name args %}.
	liquidTagRE = regexp.MustCompile(`(?s)\{%-?\s*([\w-]+)(.*?)-?%\}`)
	// liquidOutRE is a Liquid or Jinja output tag {{ variable | filter }}:
	// a name, a quoted string or a call, not Go's {{ .Field }}.
	liquidOutRE = regexp.MustCompile(`\{\{-?\s*(?:[A-Za-z_][\w.]*(?:\[[^\]]*\])?|"[^"]*"|'[^']*')(?:\s*\|[^{}]*|\([^{}]*\))?\s*-?\}\}`)
	// shortcodeRE is a Hugo shortcode tag: {{< name args >}}, {{% /name %}}.
	shortcodeRE = regexp.MustCompile(`(?s)\{\{([<%])\s*(/\*)?\s*(/)?\s*([\w./-]+)(.*?)(\*/)?\s*([%>])\}\}`)
	// htmlTagRE is an HTML tag that only wraps text: it is removed and the
	// text kept. Tables, code and pre keep their markup.
	htmlTagRE = regexp.MustCompile(`(?i)</?(?:div|span|p|details|summary|center|section|article|aside|header|footer|main|nav|figure|figcaption|picture|source|font|small|big|u|ins|mark|kbd|sup|sub|abbr|cite|dfn|var|samp|b|i|em|strong|a|br|hr|img|video|audio|iframe|svg|path|button|label|input|wbr|nobr|dl|dt|dd)\b(?:[^>"']|"[^"]*"|'[^']*')*/?>`)
	altRE     = regexp.MustCompile(`(?i)\balt\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	// inlineAttrRE is an attribute list right after a link, an image or
	// emphasis: [x](y){: .class } or ![x](y){ width="300" }.
	inlineAttrRE = regexp.MustCompile(`([)\]*_])\{:?\s*(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+))(?:\s+(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+)))*\s*\}`)
	// trailingAttrRE is an attribute list at the end of a line.
	trailingAttrRE = regexp.MustCompile(`\s+\{:?\s*((?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+))(?:\s+(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+)))*)\s*\}\s*$`)
	headingRE      = regexp.MustCompile(`^ {0,3}#{1,6}(?:\s|$)`)
	attrIDRE       = regexp.MustCompile(`(?:^|\s)#([\w-]+)`)
	titleAttrRE    = regexp.MustCompile(`\b(?:title|label|summary|heading|header|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{["'` + "`" + `]([^"'` + "`" + `]*)["'` + "`" + `]\})`)
	quotedArgRE    = regexp.MustCompile(`^\s*(?:"([^"]*)"|'([^']*)')`)
	refArgRE       = regexp.MustCompile(`(?:"([^"]*)"|'([^']*)'|(\S+))`)
)

// liquidControl are the Liquid and Jinja tags that only steer rendering:
// they are removed without being counted, and their content is kept.
var liquidControl = map[string]bool{
	"if": true, "elsif": true, "elif": true, "else": true, "endif": true, "unless": true, "endunless": true,
	"for": true, "endfor": true, "case": true, "when": true, "endcase": true, "assign": true, "set": true,
	"endset": true, "with": true, "endwith": true, "block": true, "endblock": true, "extends": true,
	"macro": true, "endmacro": true, "increment": true, "decrement": true, "cycle": true, "break": true,
	"continue": true, "tablerow": true, "endtablerow": true, "filter": true, "endfilter": true, "liquid": true,
}

// prose cleans a run of lines that holds no fenced code: comments,
// template tags, shortcodes, components, wrapper HTML and attribute lists.
func (n *normalizer) prose(lines []string) []string {
	src := strings.Join(lines, "\n")
	if !strings.ContainsAny(src, "<{") {
		return lines
	}
	code := codeSpans(src, fencedSpans(lines))
	var edits []edit               // never overlapping
	used := make([]bool, len(src)) // the bytes an edit covers
	taken := func(s, e int) bool {
		return slices.Contains(used[s:e], true)
	}
	add := func(s, e int, repl string) {
		if !taken(s, e) {
			edits = append(edits, edit{s, e, repl})
			for k := s; k < e; k++ {
				used[k] = true
			}
		}
	}
	inCode := func(i int) bool { return code.contains(i) }

	// Comments go whole, code spans inside them too.
	for _, re := range []*regexp.Regexp{htmlCommentRE, mdxCommentRE} {
		for _, m := range re.FindAllStringIndex(src, -1) {
			if !inCode(m[0]) {
				add(m[0], m[1], cut)
			}
		}
	}

	// Liquid / Jinja block tags.
	tags := liquidTagRE.FindAllStringSubmatchIndex(src, -1)
	for i := 0; i < len(tags); i++ {
		m := tags[i]
		if inCode(m[0]) || taken(m[0], m[1]) || (m[0] > 0 && src[m[0]-1] == '{') {
			continue // {{% shortcode %}} is Hugo's
		}
		name := src[m[2]:m[3]]
		args := strings.TrimSpace(src[m[4]:m[5]])
		switch name {
		case "raw", "comment", "capture", "highlight":
			end := -1
			for j := i + 1; j < len(tags); j++ {
				if src[tags[j][2]:tags[j][3]] == "end"+name {
					end = j
					break
				}
			}
			if end < 0 {
				add(m[0], m[1], cut)
				continue
			}
			e := tags[end]
			switch name {
			case "raw":
				add(m[0], m[1], cut)
				add(e[0], e[1], cut)
				code.add(m[1], e[0])
			case "comment", "capture":
				add(m[0], e[1], cut)
			case "highlight":
				lang := strings.Fields(args + " ")[0]
				add(m[0], m[1], fenceLine(src, m[0], m[1], "```"+lang))
				add(e[0], e[1], fenceLine(src, e[0], e[1], "```"))
				code.add(m[1], e[0])
			}
			i = end
		default:
			if !liquidControl[name] && !strings.HasPrefix(name, "end") {
				n.drop(1)
				add(m[0], m[1], cut)
			} else {
				add(m[0], m[1], cutBlock)
			}
		}
	}

	// Hugo shortcodes, paired by name.
	n.pairTags(src, shortcodeTokens(src, inCode), add, taken, code)
	// JSX components, paired by name.
	n.pairTags(src, jsxTokens(src, inCode), add, taken, code)

	for _, m := range liquidOutRE.FindAllStringIndex(src, -1) {
		if !inCode(m[0]) && !taken(m[0], m[1]) {
			n.drop(1)
			add(m[0], m[1], cut)
		}
	}
	for _, m := range htmlTagRE.FindAllStringIndex(src, -1) {
		if inCode(m[0]) || taken(m[0], m[1]) {
			continue
		}
		tag := src[m[0]:m[1]]
		repl := cut
		low := strings.ToLower(tag)
		switch {
		case strings.HasPrefix(low, "<img"):
			if a := altRE.FindStringSubmatch(tag); a != nil && strings.TrimSpace(a[1]+a[2]) != "" {
				repl = a[1] + a[2]
			}
		case strings.HasPrefix(low, "<br"), strings.HasPrefix(low, "<hr"):
			repl = " " + cut
		case strings.HasPrefix(low, "<summary"), strings.HasPrefix(low, "</summary"):
			repl = "**" // a disclosure's summary is its title
		case strings.HasPrefix(low, "<details"), strings.HasPrefix(low, "</details"):
			repl = cut + "\n"
		}
		add(m[0], m[1], repl)
	}
	for _, m := range inlineAttrRE.FindAllStringSubmatchIndex(src, -1) {
		if !inCode(m[0]) && !taken(m[0], m[1]) {
			add(m[3], m[1], cut)
		}
	}

	text := applyEdits(src, edits)
	out := strings.Split(text, "\n")
	kept := out[:0]
	for _, l := range out {
		if strings.ContainsAny(l, cut+cutBlock) {
			rest := strings.TrimSpace(strings.NewReplacer(cut, "", cutBlock, "").Replace(l))
			switch {
			case rest == "" && strings.Contains(l, cutBlock):
				l = ""
			case rest == "":
				continue
			default:
				l = strings.NewReplacer(cut, "", cutBlock, "").Replace(l)
			}
		}
		kept = append(kept, cleanLineAttrs(l))
	}
	return kept
}

// fencedSpans returns the byte ranges of the fenced code blocks of
// lines joined by newlines, fences included (see fencedLines).
func fencedSpans(lines []string) *spans {
	s := &spans{}
	in := fencedLines(lines)
	off, start := 0, -1
	for i, l := range lines {
		switch {
		case in[i] && start < 0:
			start = off
		case !in[i] && start >= 0:
			s.add(start, off-1)
			start = -1
		}
		off += len(l) + 1
	}
	if start >= 0 {
		s.add(start, off)
	}
	return s
}

// fencedLines marks the lines of lines that are inside fenced code,
// fences included; a block left open runs to the end.
func fencedLines(lines []string) []bool {
	in := make([]bool, len(lines))
	fence := ""
	for i, l := range lines {
		switch {
		case fence != "":
			in[i] = true
			if search.ClosesFence(l, fence) {
				fence = ""
			}
		default:
			if f := search.FenceOpen(l); f != "" {
				fence, in[i] = f, true
			}
		}
	}
	return in
}

// cleanLineAttrs rewrites a heading's attribute list to its id alone
// ("## Options {#options}", which the chunker reads as the heading's
// anchor), and drops the attribute list at the end of any other line.
func cleanLineAttrs(l string) string {
	if !strings.HasSuffix(strings.TrimRight(l, " \t"), "}") {
		return l
	}
	m := trailingAttrRE.FindStringSubmatchIndex(l)
	if m == nil {
		return l
	}
	head := l[:m[0]]
	if headingRE.MatchString(l) {
		if id := attrIDRE.FindStringSubmatch(l[m[2]:m[3]]); id != nil {
			return head + " {#" + id[1] + "}"
		}
	}
	return head
}

// tagToken is one shortcode or component tag.
type tagToken struct {
	start, end int
	name       string
	args       string
	closing    bool
	self       bool // self-closing: never paired
	escaped    bool // Hugo's {{</* x */>}}: shown as written
	ownLine    bool
	hugo       bool // a shortcode, not a component
}

// fenceLine is a code fence written in place of the tag at src[s:e]: on a
// line of its own, as a fence must be.
func fenceLine(src string, s, e int, fence string) string {
	if !ownLine(src, s, e) {
		return "\n" + fence + "\n"
	}
	return fence
}

// shortcodeTokens finds Hugo shortcode tags outside code.
func shortcodeTokens(src string, inCode func(int) bool) []tagToken {
	var out []tagToken
	for _, m := range shortcodeRE.FindAllStringSubmatchIndex(src, -1) {
		if inCode(m[0]) {
			continue
		}
		open, close := src[m[2]:m[3]], src[m[14]:m[15]]
		if (open == "<") != (close == ">") {
			continue
		}
		args := src[m[10]:m[11]]
		t := tagToken{start: m[0], end: m[1], name: src[m[8]:m[9]], args: args,
			closing: m[6] >= 0, escaped: m[4] >= 0 && m[12] >= 0, hugo: true}
		if strings.HasSuffix(strings.TrimSpace(args), "/") {
			t.self = true
			t.args = strings.TrimSuffix(strings.TrimSpace(args), "/")
		}
		t.ownLine = ownLine(src, m[0], m[1])
		out = append(out, t)
	}
	return out
}

// jsxTokens finds JSX component tags (a capitalised name: <Tabs>,
// </TabItem>, <DocCardList />) outside code. An opening tag without
// attributes whose name is never closed is not a component: prose writes
// placeholders like <Name> too.
func jsxTokens(src string, inCode func(int) bool) []tagToken {
	var out []tagToken
	closed := map[string]bool{}
	for i := 0; i+2 < len(src); i++ {
		if src[i] != '<' || inCode(i) {
			continue
		}
		j := i + 1
		closing := false
		if src[j] == '/' {
			closing = true
			j++
		}
		if j >= len(src) || src[j] < 'A' || src[j] > 'Z' {
			continue
		}
		k := j
		for k < len(src) && (isWordByte(src[k]) || src[k] == '.') {
			k++
		}
		name := src[j:k]
		end, ok := tagEnd(src, k)
		if !ok {
			continue
		}
		attrs := src[k : end-1]
		self := strings.HasSuffix(strings.TrimSpace(attrs), "/")
		if self {
			attrs = strings.TrimSuffix(strings.TrimSpace(attrs), "/")
		}
		if k < len(src) && !(src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '>' || src[k] == '/') {
			continue
		}
		t := tagToken{start: i, end: end, name: name, args: attrs, closing: closing, self: self, ownLine: ownLine(src, i, end)}
		if closing {
			closed[name] = true
		}
		out = append(out, t)
		i = end - 1
	}
	kept := out[:0]
	for _, t := range out {
		if t.closing || t.self || strings.TrimSpace(t.args) != "" || closed[t.name] {
			kept = append(kept, t)
		}
	}
	return kept
}

// tagEnd returns the index after the '>' that ends a tag whose name ends
// at i, skipping quoted strings and {} expressions.
func tagEnd(src string, i int) (int, bool) {
	depth := 0
	var quote byte
	for ; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '>' && depth <= 0:
			return i + 1, true
		case c == '<' && depth <= 0:
			return 0, false
		}
	}
	return 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ownLine reports whether src[s:e] is alone on its line(s): only blanks
// between it and the line breaks before and after it.
func ownLine(src string, s, e int) bool {
	for k := s - 1; k >= 0 && src[k] != '\n'; k-- {
		if src[k] != ' ' && src[k] != '\t' {
			return false
		}
	}
	for k := e; k < len(src) && src[k] != '\n'; k++ {
		if src[k] != ' ' && src[k] != '\t' && src[k] != '\r' {
			return false
		}
	}
	return true
}

// pairTags decides what becomes of each tag: a pair keeps its inner text
// (and its title, on a line of its own), a tag without a partner is
// removed and counted. Hugo's highlight becomes fenced code, its ref and
// relref the path they name.
func (n *normalizer) pairTags(src string, toks []tagToken, add func(int, int, string), taken func(int, int) bool, code *spans) {
	partner := make([]int, len(toks))
	for i := range partner {
		partner[i] = -1
	}
	var stack []int
	for i, t := range toks {
		if t.escaped || t.self {
			continue
		}
		if !t.closing {
			stack = append(stack, i)
			continue
		}
		for s := len(stack) - 1; s >= 0; s-- {
			if toks[stack[s]].name == t.name {
				partner[stack[s]], partner[i] = i, stack[s]
				stack = stack[:s]
				break
			}
		}
	}
	for i, t := range toks {
		if taken(t.start, t.end) {
			continue
		}
		name := strings.ToLower(path.Base(t.name))
		switch {
		case t.escaped:
			// {{</* x */>}} documents the shortcode itself.
			add(t.start, t.end, "`{{< "+strings.TrimSpace(t.name+" "+strings.TrimSpace(t.args))+" >}}`")
		case t.hugo && name == "highlight" && partner[i] >= 0 && !t.closing:
			lang := strings.Fields(strings.Trim(t.args, " \"'") + " ")[0]
			p := toks[partner[i]]
			add(t.start, t.end, fenceLine(src, t.start, t.end, "```"+lang))
			add(p.start, p.end, fenceLine(src, p.start, p.end, "```"))
			code.add(t.end, p.start)
		case t.hugo && (name == "ref" || name == "relref") && !t.closing:
			target := ""
			if m := refArgRE.FindStringSubmatch(t.args); m != nil {
				target = m[1] + m[2] + m[3]
			}
			add(t.start, t.end, target)
		case partner[i] >= 0:
			repl := cutBlock
			if !t.closing && t.ownLine {
				if title := tagTitle(t.args); title != "" {
					ls := strings.LastIndexByte(src[:t.start], '\n') + 1
					repl = "\n\n" + src[ls:t.start] + "**" + title + "**\n\n"
				}
			}
			add(t.start, t.end, repl)
		default:
			n.drop(1)
			add(t.start, t.end, cut)
		}
	}
}

// tagTitle is the title, label or first quoted argument of a tag.
func tagTitle(args string) string {
	if m := titleAttrRE.FindStringSubmatch(args); m != nil {
		return strings.TrimSpace(m[1] + m[2] + m[3])
	}
	if m := quotedArgRE.FindStringSubmatch(args); m != nil {
		return strings.TrimSpace(m[1] + m[2])
	}
	return ""
}

// applyEdits applies non-overlapping edits to src.
func applyEdits(src string, edits []edit) string {
	if len(edits) == 0 {
		return src
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if e.start < last {
			continue
		}
		b.WriteString(src[last:e.start])
		b.WriteString(e.repl)
		last = e.end
	}
	b.WriteString(src[last:])
	return b.String()
}

// spans is a set of byte ranges, which may nest.
type spans struct {
	r      [][2]int
	maxEnd []int // maxEnd[k]: the furthest end of r[0..k], once sorted
}

func (s *spans) add(a, b int) { s.r, s.maxEnd = append(s.r, [2]int{a, b}), nil }

func (s *spans) contains(i int) bool {
	if s.maxEnd == nil {
		slices.SortFunc(s.r, func(a, b [2]int) int { return a[0] - b[0] })
		s.maxEnd = make([]int, len(s.r))
		for k, r := range s.r {
			s.maxEnd[k] = r[1]
			if k > 0 {
				s.maxEnd[k] = max(r[1], s.maxEnd[k-1])
			}
		}
	}
	// Every range up to the last one starting at or before i starts
	// there; one of them holds i when the furthest end is past it.
	k := sort.Search(len(s.r), func(k int) bool { return s.r[k][0] > i }) - 1
	return k >= 0 && s.maxEnd[k] > i
}

// codeSpans returns fenced (the fenced code of src) with the inline code
// spans of src outside it: a run of backticks up to the next run of the
// same length, within one paragraph.
func codeSpans(src string, fenced *spans) *spans {
	s := fenced
	inFence := func(i int) bool { return fenced.contains(i) }
	var found [][2]int
	defer func() {
		for _, r := range found {
			s.add(r[0], r[1])
		}
	}()
	for i := 0; i < len(src); i++ {
		if src[i] != '`' || (i > 0 && src[i-1] == '\\') || inFence(i) {
			continue
		}
		j := i
		for j < len(src) && src[j] == '`' {
			j++
		}
		run := j - i
		end := -1
		for k := j; k < len(src); k++ {
			if src[k] == '\n' && k+1 < len(src) && strings.TrimSpace(lineAt(src, k+1)) == "" {
				break
			}
			if src[k] != '`' {
				continue
			}
			l := k
			for l < len(src) && src[l] == '`' {
				l++
			}
			if l-k == run {
				end = l
				break
			}
			k = l - 1
		}
		if end < 0 {
			i = j - 1
			continue
		}
		found = append(found, [2]int{i, end})
		i = end - 1
	}
	return s
}

// lineAt returns the line of src starting at i.
func lineAt(src string, i int) string {
	if e := strings.IndexByte(src[i:], '\n'); e >= 0 {
		return src[i : i+e]
	}
	return src[i:]
}

// FSIncluder reads include targets from fsys: regular files that are not
// hidden (no dot-file or dot-folder on the way), are text, and are at
// most maxBytes long (DefaultMaxBytes when 0, no limit when negative).
// Anything else is reported as not existing.
func FSIncluder(fsys fs.FS, maxBytes int) Includer {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	return func(name string) ([]byte, error) {
		if !fs.ValidPath(name) || Hidden(name) {
			return nil, fs.ErrNotExist
		}
		b, err := ReadRegular(fsys, name, maxBytes)
		if err != nil || CheckText(b, maxBytes) != nil {
			return nil, fs.ErrNotExist
		}
		return b, nil
	}
}

// ReadRegular reads the file name of fsys when what it opened is a regular
// file of at most maxBytes (no limit when maxBytes <= 0), judged by the
// opened file's own mode, not the name's (a pipe put in a page's place
// would block the read); anything else is fs.ErrNotExist.
func ReadRegular(fsys fs.FS, name string, maxBytes int) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || (maxBytes > 0 && st.Size() > int64(maxBytes)) {
		return nil, fs.ErrNotExist
	}
	return io.ReadAll(io.LimitReader(f, st.Size()+1))
}

// WholeIncludes returns the slash paths of the files that the document at
// p (content as read) includes whole, resolved with exists the way
// Normalize resolves them: snippets without a line range, include tags
// without start or end markers, and MDX partials. A source uses it to
// find fragments: files that other documents include whole, whose text
// is indexed where it is included rather than a second time on its own.
func WholeIncludes(p string, content []byte, exists func(name string) bool) []string {
	text := string(content)
	if !strings.Contains(text, "--8<--") && !strings.Contains(text, "include") && !strings.Contains(text, "import ") {
		return nil
	}
	var out []string
	resolve := func(target, kind string) {
		for _, c := range includeCandidates(p, target, kind) {
			if exists(c) {
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
				return
			}
		}
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	partials := map[string]string{}
	block := false
	raw := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.Contains(t, "{%") && liquidRawRE.MatchString(t) {
			raw = !strings.Contains(t, "endraw")
		}
		if raw {
			continue
		}
		if snippetBlockRE.MatchString(l) {
			block = !block
			continue
		}
		if block {
			if t != "" && !strings.HasPrefix(t, ";") {
				if target, first, _ := splitLineRange(t); first == 0 {
					resolve(target, "snippet")
				}
			}
			continue
		}
		if d, ok := parseInclude(l); ok {
			if target, first, _ := splitLineRange(d.target); first == 0 && !includeOptRE.MatchString(d.opts) {
				resolve(target, d.kind)
			}
			continue
		}
		if m := mdxImportRE.FindStringSubmatch(t); m != nil {
			partials[m[1]] = m[2]
			continue
		}
		if strings.HasPrefix(t, "<") && strings.HasSuffix(t, "/>") {
			if target, ok := partials[strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "<"), "/>"))]; ok {
				resolve(target, "partial")
			}
		}
	}
	return out
}
