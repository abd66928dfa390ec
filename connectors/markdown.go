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

// ErrFrontMatter is returned by ParseMarkdown for malformed front matter.
var ErrFrontMatter = errors.New("connectors: malformed front matter")

// MarkdownDoc is a markdown file split into its metadata and body.
type MarkdownDoc struct {
	// Title is the front matter title, else the first level-1 heading
	// (ATX "# X" or setext), else the humanized file name.
	Title string
	// Body is the content without the front matter block.
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
}

// ParseMarkdown splits content (the file at path, a slash path used only
// for the fallback title) into front matter and body. Front matter is a
// YAML mapping between a first line "---" and a closing "---" (or "...")
// line. Malformed front matter (unterminated, invalid YAML, not a mapping,
// a key of the wrong type, an unparseable date) returns an error wrapping
// ErrFrontMatter, so that a source can report that one file as failed.
func ParseMarkdown(path string, content []byte) (MarkdownDoc, error) {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	var doc MarkdownDoc
	front, body, ok, err := splitFrontMatter(content)
	if err != nil {
		return doc, err
	}
	doc.Body = string(body)
	if ok {
		if err := doc.applyFrontMatter(front); err != nil {
			return MarkdownDoc{}, err
		}
	}
	if doc.Title == "" {
		doc.Title = firstHeading(body)
	}
	if doc.Title == "" {
		doc.Title = HumanizeName(path)
	}
	return doc, nil
}

// splitFrontMatter returns the YAML block and the rest. ok is false when
// content does not start with a front matter delimiter.
func splitFrontMatter(content []byte) (front, body []byte, ok bool, err error) {
	first, rest, found := bytes.Cut(content, []byte("\n"))
	if !found || strings.TrimRight(string(first), " \t\r") != "---" {
		return nil, content, false, nil
	}
	off := 0
	for off <= len(rest) {
		line, next, more := bytes.Cut(rest[off:], []byte("\n"))
		trimmed := strings.TrimRight(string(line), " \t\r")
		if trimmed == "---" || trimmed == "..." {
			front = rest[:off]
			if more {
				body = next
			}
			return front, bytes.TrimLeft(body, "\r\n"), true, nil
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return nil, nil, false, fmt.Errorf("%w: no closing \"---\" line", ErrFrontMatter)
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
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
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
		if err != nil {
			return err
		}
	}
	return nil
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
