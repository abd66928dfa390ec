package connectors

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/goccy/go-yaml"
	"github.com/pelletier/go-toml/v2"

	"github.com/docent-hq/docent"
)

// DefaultMaxBytes is the largest document a file-based source reads when
// its MaxBytes option is zero: 1 MiB of text is far beyond any handbook page.
const DefaultMaxBytes = 1 << 20

// DefaultInclude are the globs file-based sources (files, git) index when
// no include patterns are configured: markdown, MDX, reStructuredText and
// plain text, at any depth.
var DefaultInclude = []string{"**/*.md", "**/*.mdx", "**/*.rst", "**/*.txt"}

// ErrBinary is returned by CheckText for content that is not UTF-8 text.
var ErrBinary = errors.New("connectors: binary file")

// ErrTooLarge is returned by CheckText for content over the size limit.
var ErrTooLarge = errors.New("connectors: file too large")

// ErrNotRegular is wrapped by the error a source reports for a path that
// is not a regular file (a symbolic link, a named pipe, a device, a
// socket): never read, skipped until it changes.
var ErrNotRegular = errors.New("connectors: not a regular file")

// ErrFrontMatter marks a front matter problem. ParseMarkdown no longer
// refuses a document for it (the problem is reported in
// MarkdownDoc.Normalized.FrontMatter and the body indexed); a source may
// still wrap it for a document it cannot take.
var ErrFrontMatter = errors.New("connectors: malformed front matter")

// MarkdownDoc is a markdown file split into its metadata and body.
type MarkdownDoc struct {
	// Title is the first level-1 heading (ATX "# X" or setext), else the
	// front matter title, else the humanized file name.
	Title string
	// Body is the content without the front matter block, normalised
	// (see Normalize).
	Body string
	// Labels come from the front matter "labels" or "tags" key (a list or
	// a comma-separated string), trimmed, empty ones dropped, deduplicated.
	Labels []string
	// Owner is the front matter "owner".
	Owner string
	// Updated is the front matter "updated" date; zero when absent.
	Updated time.Time
	// Space is the front matter "space"; empty when absent.
	Space string
	// Description is the front matter "description"; empty when absent.
	Description string
	// Extra holds any other front matter keys as decoded from YAML.
	Extra map[string]any
	// Normalized is what normalising the body did, and the front matter
	// problem, if any.
	Normalized docent.Normalized
}

// ParseMarkdown is ParseMarkdownWith without includes: include
// directives are dropped and listed as missing.
func ParseMarkdown(path string, content []byte) MarkdownDoc {
	return ParseMarkdownWith(path, content, nil)
}

// ParseMarkdownWith splits content (the file at name, a slash path used
// for the fallback title and for resolving includes) into front matter and
// body, and normalises the body (Normalize), reading include targets
// through read.
//
// Front matter is a YAML mapping between a first line "---" and a closing
// "---" (or "...") line, or Hugo's TOML between "+++" lines. A first line
// "---" with no closing line, or whose block is not a mapping of keys
// (prose between two rules), is a thematic break: the whole content is the
// body. A block that reads as front matter but is not valid (a YAML
// syntax error, a key of the wrong type, an unparseable date) never loses
// the document: Normalized.FrontMatter says what is wrong, the title and
// description are read from their lines when they can be, the fields
// that are valid are kept, and the body is indexed.
func ParseMarkdownWith(name string, content []byte, read Includer) MarkdownDoc {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	text := strings.ReplaceAll(string(content), "\r\n", "\n")
	var doc MarkdownDoc
	fm := splitFrontMatter(text)
	body := text
	if fm.ok {
		body = fm.body
		var err error
		if fm.toml {
			err = doc.applyTOML(fm.front)
		} else {
			err = doc.applyFrontMatter([]byte(fm.front))
		}
		if err != nil {
			doc.Normalized.FrontMatter = strings.TrimPrefix(err.Error(), ErrFrontMatter.Error()+": ")
			doc.salvage(fm.front)
		}
	} else if fm.problem != "" {
		doc.Normalized.FrontMatter = fm.problem
	}
	if ext := strings.ToLower(path.Ext(name)); ext == ".txt" || ext == ".rst" {
		// Plain text and reStructuredText are not markdown: no
		// static-site markup to remove.
		doc.Body = body
	} else {
		norm, notes := Normalize(name, body, read)
		notes.FrontMatter = doc.Normalized.FrontMatter
		doc.Body, doc.Normalized = norm, notes
	}
	// The page's own first-level heading is the title a reader sees at the
	// top of the page; a front matter title beside it is the generator's
	// metadata (the browser tab, search engines: "Traefik Routers
	// Documentation" over "# Routers") and names the page only when the
	// body has no such heading (Hugo and Jekyll layouts render it).
	if h := firstHeading([]byte(doc.Body)); h != "" {
		doc.Title = h
	}
	if doc.Title == "" {
		doc.Title = HumanizeName(name)
	}
	return doc
}

// frontMatter is the outcome of splitFrontMatter.
type frontMatter struct {
	front, body string
	ok          bool   // a front matter block was found
	toml        bool   // +++ delimited
	problem     string // an unterminated block that looked like front matter
}

// yamlKeyRE is a line that starts a YAML mapping entry.
var yamlKeyRE = regexp.MustCompile(`^["']?[\w$@][\w .$@/-]*["']?\s*:(?:\s|$)`)

// splitFrontMatter finds the front matter block at the start of text.
func splitFrontMatter(text string) frontMatter {
	first, rest, found := strings.Cut(text, "\n")
	delim := strings.TrimRight(first, " \t")
	if !found || (delim != "---" && delim != "+++") {
		return frontMatter{body: text}
	}
	off := 0
	for off <= len(rest) {
		line, _, more := strings.Cut(rest[off:], "\n")
		t := strings.TrimRight(line, " \t")
		if t == delim || (delim == "---" && t == "...") {
			front := rest[:off]
			body := ""
			if more {
				body = rest[off+len(line)+1:]
			}
			if delim == "---" && !looksLikeYAML(front) {
				// Prose between two rules, not metadata.
				return frontMatter{body: text}
			}
			return frontMatter{front: front, body: strings.TrimLeft(body, "\n"), ok: true, toml: delim == "+++"}
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	fm := frontMatter{body: text}
	if looksLikeYAML(rest) && delim == "---" {
		if k := firstContentLine(rest); yamlKeyRE.MatchString(k) {
			fm.problem = `front matter has no closing "---" line; the file is indexed as written`
		}
	}
	return fm
}

// looksLikeYAML reports whether block is empty or opens with a YAML key,
// a comment or a list item: metadata rather than prose.
func looksLikeYAML(block string) bool {
	l := firstContentLine(block)
	return l == "" || strings.HasPrefix(l, "#") || yamlKeyRE.MatchString(l) || strings.HasPrefix(l, "- ")
}

func firstContentLine(block string) string {
	for l := range strings.SplitSeq(block, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// cutFrontMatter returns text without its front matter block, for an
// included file.
func cutFrontMatter(text string) (front, body string, ok bool) {
	fm := splitFrontMatter(text)
	return fm.front, fm.body, fm.ok
}

// salvageRE is a title or description line of a front matter block that
// is not valid YAML.
var salvageRE = regexp.MustCompile(`(?m)^(title|description)\s*[:=]\s*(.*?)\s*$`)

// salvage reads the title and description lines of a front matter block
// that did not parse, quotes trimmed.
func (d *MarkdownDoc) salvage(front string) {
	for _, m := range salvageRE.FindAllStringSubmatch(front, -1) {
		v := strings.TrimSpace(strings.Trim(m[2], `"' `))
		switch m[1] {
		case "title":
			if d.Title == "" {
				d.Title = v
			}
		case "description":
			if d.Description == "" {
				d.Description = v
			}
		}
	}
}

// applyTOML applies Hugo's TOML front matter.
func (d *MarkdownDoc) applyTOML(front string) error {
	var raw map[string]any
	if err := toml.Unmarshal([]byte(front), &raw); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return fmt.Errorf("%w: line %d, column %d: %s", ErrFrontMatter, row+1, col, de.Error())
		}
		return fmt.Errorf("%w: %s", ErrFrontMatter, err)
	}
	return d.applyFields(raw)
}

// yamlPos matches the "[line:column]" positions in a YAML error message.
var yamlPos = regexp.MustCompile(`\[(\d+):(\d+)\]`)

// fileLines rewrites the "[line:column]" positions of a YAML error about
// the front matter block as "line N, column C" of the file: the block
// starts on line 2, after the opening "---". A leading position is
// followed by a colon: "[2:8] found ..." reads "line 3, column 8: found ...".
func fileLines(msg string) string {
	toFile := func(m string) string {
		sub := yamlPos.FindStringSubmatch(m)
		line, err := strconv.Atoi(sub[1])
		if err != nil {
			return m
		}
		return fmt.Sprintf("line %d, column %s", line+1, sub[2])
	}
	out := yamlPos.ReplaceAllStringFunc(msg, toFile)
	if loc := yamlPos.FindStringIndex(msg); loc != nil && loc[0] == 0 {
		head := toFile(msg[:loc[1]])
		out = head + ":" + out[len(head):]
	}
	return out
}

func (d *MarkdownDoc) applyFrontMatter(front []byte) error {
	if len(bytes.TrimSpace(front)) == 0 {
		return nil
	}
	var raw any
	if err := yaml.Unmarshal(front, &raw); err != nil {
		msg := strings.Join(strings.Fields(yaml.FormatError(err, false, false)), " ")
		return fmt.Errorf("%w: %s", ErrFrontMatter, fileLines(msg))
	}
	if raw == nil {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: expected a mapping of keys, got %s", ErrFrontMatter, yamlKind(raw))
	}
	return d.applyFields(m)
}

// applyFields sets the known fields from a decoded front matter mapping.
// A field of the wrong type is left unset; the first such problem is
// returned after every other field is applied.
func (d *MarkdownDoc) applyFields(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var first error
	// Static-site generators' dates, used when there is no "updated", in
	// this order: Hugo's lastmod, Jekyll's last_modified_at, then the
	// publication date (Hugo's and Jekyll's date, Docusaurus's
	// last_update.date). One that does not parse is left in Extra.
	dates := map[string]time.Time{}
	for _, key := range keys {
		v := m[key]
		if v == nil {
			continue
		}
		var err error
		switch strings.ToLower(key) {
		case "title":
			d.Title, err = scalarString(key, v)
		case "owner":
			d.Owner, err = scalarString(key, v)
		case "space":
			d.Space, err = scalarString(key, v)
		case "description":
			d.Description, err = scalarString(key, v)
		case "updated":
			d.Updated, err = parseDate(v)
		case "lastmod", "last_modified_at", "date", "last_update":
			dv := v
			if u, ok := v.(map[string]any); ok && strings.EqualFold(key, "last_update") {
				dv = u["date"]
			}
			if t, perr := parseDate(dv); perr == nil {
				dates[strings.ToLower(key)] = t
			}
			if d.Extra == nil {
				d.Extra = map[string]any{}
			}
			d.Extra[key] = v
		case "labels", "tags":
			var labels []string
			labels, err = stringList(key, v)
			d.Labels = appendUnique(d.Labels, labels...)
		default:
			if d.Extra == nil {
				d.Extra = map[string]any{}
			}
			d.Extra[key] = v
		}
		if err != nil && first == nil {
			first = err
		}
	}
	for _, key := range []string{"lastmod", "last_modified_at", "date", "last_update"} {
		if t, ok := dates[key]; ok && d.Updated.IsZero() {
			d.Updated = t
		}
	}
	return first
}

func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	default:
		return "a single value"
	}
}

func scalarString(key string, v any) (string, error) {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v), nil
	case int, int64, uint64, float64, bool:
		return fmt.Sprint(v), nil
	default:
		return "", fmt.Errorf("%w: %q must be a single value, got %s", ErrFrontMatter, key, yamlKind(v))
	}
}

func stringList(key string, v any) ([]string, error) {
	var out []string
	switch v := v.(type) {
	case string:
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case []any:
		for _, item := range v {
			s, err := scalarString(key, item)
			if err != nil {
				return nil, fmt.Errorf("%w: %q must be a list of words or a comma-separated string", ErrFrontMatter, key)
			}
			if s != "" {
				out = append(out, s)
			}
		}
	default:
		return nil, fmt.Errorf("%w: %q must be a list of words or a comma-separated string", ErrFrontMatter, key)
	}
	return out, nil
}

func appendUnique(dst []string, items ...string) []string {
	for _, s := range items {
		dup := false
		for _, d := range dst {
			if d == s {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, s)
		}
	}
	return dst
}

func parseDate(v any) (time.Time, error) {
	switch v := v.(type) {
	case time.Time:
		return v, nil
	case string:
		s := strings.TrimSpace(v)
		if t, err := time.Parse(time.DateOnly, s); err == nil {
			return t, nil
		}
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, nil
		}
		return time.Time{}, fmt.Errorf("%w: \"updated\" must be a date like 2024-05-31 or 2024-05-31T09:00:00Z, got %q", ErrFrontMatter, s)
	default:
		return time.Time{}, fmt.Errorf("%w: \"updated\" must be a date like 2024-05-31, got %v", ErrFrontMatter, v)
	}
}

// firstHeading returns the text of the first level-1 heading outside code
// fences, or "".
func firstHeading(body []byte) string {
	lines := strings.Split(string(body), "\n")
	fence := ""
	prev := ""
	for _, line := range lines {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			prev = ""
			continue
		}
		if indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			prev = ""
			continue
		}
		if indent < 4 && (trimmed == "#" || strings.HasPrefix(trimmed, "# ") || strings.HasPrefix(trimmed, "#\t")) {
			t := strings.TrimSpace(trimmed[1:])
			t = strings.TrimSpace(strings.TrimRight(t, "#"))
			if t != "" {
				return t
			}
		}
		if indent < 4 && prev != "" && trimmed != "" && strings.Trim(trimmed, "=") == "" {
			return prev
		}
		if indent < 4 && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			prev = trimmed
		} else {
			prev = ""
		}
	}
	return ""
}

// HumanizeName turns a file path into a title: the base name without its
// extension, dashes and underscores as spaces, first letter upper case
// ("docs/on-call-guide.md" becomes "On call guide").
func HumanizeName(p string) string {
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	base = strings.Join(strings.FieldsFunc(base, func(r rune) bool {
		return r == '-' || r == '_' || unicode.IsSpace(r)
	}), " ")
	if base == "" {
		return "Untitled"
	}
	r, size := utf8.DecodeRuneInString(base)
	return string(unicode.ToUpper(r)) + base[size:]
}

// CheckText returns an error wrapping ErrTooLarge when content is longer
// than max bytes (max <= 0 means no limit), or wrapping ErrBinary when it
// contains a NUL byte or is not valid UTF-8. The messages are safe to show
// to an admin.
func CheckText(content []byte, max int) error {
	if max > 0 && len(content) > max {
		return fmt.Errorf("%w: %d bytes, over the limit of %d bytes", ErrTooLarge, len(content), max)
	}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		return fmt.Errorf("%w: NUL byte at offset %d, not text", ErrBinary, i)
	}
	if !utf8.Valid(content) {
		off := 0
		for off < len(content) {
			r, size := utf8.DecodeRune(content[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return fmt.Errorf("%w: invalid UTF-8 at offset %d, not text", ErrBinary, off)
	}
	return nil
}

// ExpandURL replaces each "{key}" in tmpl with vars[key], escaping each
// slash-separated segment of the value for use in a URL path (slashes are
// kept). Placeholders without a value are left as they are. An empty
// template gives "".
func ExpandURL(tmpl string, vars map[string]string) string {
	if tmpl == "" {
		return ""
	}
	var b strings.Builder
	rest := tmpl
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(rest)
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			b.WriteString(rest)
			break
		}
		key := rest[open+1 : open+end]
		b.WriteString(rest[:open])
		if v, ok := vars[key]; ok {
			b.WriteString(escapePath(v))
		} else {
			b.WriteString(rest[open : open+end+1])
		}
		rest = rest[open+end+1:]
	}
	return b.String()
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ValidatePatterns checks that every doublestar glob is well formed.
func ValidatePatterns(patterns []string) error {
	for _, p := range patterns {
		if !doublestar.ValidatePattern(p) {
			return fmt.Errorf("connectors: invalid glob pattern %q", p)
		}
	}
	return nil
}

// MatchPath reports whether the slash path p matches one of include
// (DefaultInclude when empty) and none of exclude. Patterns are doublestar
// globs ("**/*.md", "drafts/**"); invalid patterns never match, so check
// them first with ValidatePatterns. A hidden path (see Hidden) never
// matches, whatever the patterns: dot-files and dot-folders (.env,
// .git/, .github/) are never documentation.
func MatchPath(p string, include, exclude []string) bool {
	if Hidden(p) {
		return false
	}
	if len(include) == 0 {
		include = DefaultInclude
	}
	matched := false
	for _, pat := range include {
		if ok, _ := doublestar.Match(pat, p); ok {
			matched = true
			break
		}
	}
	if !matched {
		return false
	}
	for _, pat := range exclude {
		if ok, _ := doublestar.Match(pat, p); ok {
			return false
		}
	}
	return true
}

// Hidden reports whether any element of the slash path p starts with a
// dot: a dot-file, or a file inside a dot-folder. "." and ".." elements
// count too, so an unclean path is hidden as well.
func Hidden(p string) bool {
	for elem := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(elem, ".") {
			return true
		}
	}
	return false
}
