package searchtest

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// ChunkAudit is what a set of chunks holds that a clean index must not:
// the IDs of the chunks with each problem, and how many repeat or are tiny.
type ChunkAudit struct {
	// Chunks counts the chunks audited.
	Chunks int
	// Anchors are chunks whose section path holds a heading anchor or an
	// attribute list ("Options {#options}", "{: .x }").
	Anchors []string
	// Tags are chunks whose text holds a raw shortcode, template tag or
	// component ({{< x >}}, {% x %}, <Tabs>, an MDX import line) outside
	// code.
	Tags []string
	// Comments are chunks whose text holds an HTML or MDX comment.
	Comments []string
	// OpenFences are chunks whose text opens a code fence it never closes.
	OpenFences []string
	// Duplicates counts the chunks whose body (Text after the heading
	// line) is exactly the body of an earlier chunk of the same document;
	// Copies those that repeat a chunk of another document and are
	// indexed apart from it; Folded those an index that folds copies
	// (search.Folder) indexes once, under the first of them.
	Duplicates, Copies, Folded int
	// Tiny are chunks whose body is under search.DefaultMinSectionChars.
	Tiny []string
}

var (
	auditAnchorRE = regexp.MustCompile(`\{#[\w-]+|\{:|\{\s*[#.][\w-]+[^}]*\}`)
	auditTagREs   = []*regexp.Regexp{
		regexp.MustCompile(`\{\{[<%]|[%>]\}\}`),
		regexp.MustCompile(`\{%-?\s*[\w-]+`),
		regexp.MustCompile(`</[A-Z][\w.]*\s*>|<[A-Z][\w.]*(?:\s[^<>]*)?/>|<[A-Z][\w.]*\s+[\w-]+=`),
		regexp.MustCompile(`(?m)^(?:import\s.+\sfrom\s+["']|export\s+(?:default|const|function)\b)`),
	}
	auditCommentRE = regexp.MustCompile(`<!--|\{/\*`)
	auditSpanRE    = regexp.MustCompile("(`+)[^`]*?(`+)")
)

// AuditChunks audits chunks, each indexed on its own.
func AuditChunks(chunks []docent.Chunk) ChunkAudit {
	return auditChunks(chunks, nil)
}

// AuditIndex audits the chunks ix stores (Scan), and returns them: the
// copies a folding index (search.Folder) indexes once count as Folded,
// not as Copies.
func AuditIndex(ctx context.Context, ix search.Index) (ChunkAudit, []docent.Chunk, error) {
	var chunks []docent.Chunk
	if err := ix.Scan(ctx, func(c docent.Chunk) error { chunks = append(chunks, c); return nil }); err != nil {
		return ChunkAudit{}, nil, err
	}
	folded := map[string]bool{}
	if f, ok := ix.(search.Folder); ok {
		ids := make([]string, len(chunks))
		for i, c := range chunks {
			ids[i] = c.ID
		}
		copies, err := f.Copies(ctx, ids)
		if err != nil {
			return ChunkAudit{}, nil, err
		}
		for _, cs := range copies {
			for _, id := range cs {
				folded[id] = true
			}
		}
	}
	return auditChunks(chunks, folded), chunks, nil
}

func auditChunks(chunks []docent.Chunk, folded map[string]bool) ChunkAudit {
	a := ChunkAudit{Chunks: len(chunks)}
	seen := map[string]bool{}     // bodies
	inDoc := map[[2]string]bool{} // document and body
	for _, c := range chunks {
		for _, s := range c.Section {
			if auditAnchorRE.MatchString(s) {
				a.Anchors = append(a.Anchors, c.ID)
				break
			}
		}
		body := c.Body()
		prose, open := proseOf(body)
		if open {
			a.OpenFences = append(a.OpenFences, c.ID)
		}
		for _, re := range auditTagREs {
			if re.MatchString(prose) {
				a.Tags = append(a.Tags, c.ID)
				break
			}
		}
		if auditCommentRE.MatchString(prose) {
			a.Comments = append(a.Comments, c.ID)
		}
		switch {
		case folded[c.ID]:
			a.Folded++
		case inDoc[[2]string{c.DocID, body}]:
			a.Duplicates++
		case seen[body]:
			a.Copies++
		}
		if !folded[c.ID] {
			seen[body] = true
			inDoc[[2]string{c.DocID, body}] = true
		}
		if len(body) < search.DefaultMinSectionChars {
			a.Tiny = append(a.Tiny, c.ID)
		}
	}
	return a
}

// proseOf returns body without fenced code and inline code spans, and
// whether a fence is left open.
func proseOf(body string) (string, bool) {
	var b strings.Builder
	fence := ""
	for line := range strings.SplitSeq(body, "\n") {
		t := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if len(line)-len(t) <= 3 && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			n := 0
			for n < len(t) && t[n] == t[0] {
				n++
			}
			fence = t[:n]
			continue
		}
		b.WriteString(auditSpanRE.ReplaceAllString(line, ""))
		b.WriteByte('\n')
	}
	return b.String(), fence != ""
}

// Check fails tb when any chunk has an anchor in its section path, a raw
// tag, a comment or an open fence, or when the bodies indexed more than
// once (Duplicates and Copies) or tiny chunks are more than the given
// shares of all chunks. It logs an example of each problem found, and the
// copies folded.
func (a ChunkAudit) Check(tb testing.TB, chunks []docent.Chunk, maxDuplicates, maxTiny float64) {
	tb.Helper()
	byID := make(map[string]docent.Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	show := func(what string, ids []string) {
		if len(ids) > 0 {
			c := byID[ids[0]]
			tb.Errorf("%d chunks with %s, e.g. %s %q: %q", len(ids), what, c.DocID, c.Section, c.Text)
		}
	}
	show("a heading anchor in the section path", a.Anchors)
	show("a raw shortcode, template tag or component", a.Tags)
	show("an HTML or MDX comment", a.Comments)
	show("an unbalanced code fence", a.OpenFences)
	if a.Chunks == 0 {
		return
	}
	if share := float64(a.Duplicates+a.Copies) / float64(a.Chunks); share > maxDuplicates {
		tb.Errorf("%d of %d chunks (%.1f%%) repeat a body indexed before them (%d of their own document, %d of another), over %.1f%%",
			a.Duplicates+a.Copies, a.Chunks, 100*share, a.Duplicates, a.Copies, 100*maxDuplicates)
	}
	tb.Logf("%d chunks, %d indexed once under a copy of another document (%.1f%%), %d indexed apart, %d under %d characters",
		a.Chunks, a.Folded, 100*float64(a.Folded)/float64(a.Chunks), a.Copies, len(a.Tiny), search.DefaultMinSectionChars)
	if share := float64(len(a.Tiny)) / float64(a.Chunks); share > maxTiny {
		c := byID[a.Tiny[0]]
		tb.Errorf("%d of %d chunks (%.1f%%) have a body under %d characters, over %.1f%%, e.g. %s %q",
			len(a.Tiny), a.Chunks, 100*share, search.DefaultMinSectionChars, 100*maxTiny, c.DocID, c.Text)
	}
}
