package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// Tool names, as clients call them.
const (
	ToolSearch      = "search_docs"
	ToolAsk         = "ask_docs"
	ToolGetDocument = "get_document"
)

// Search limits: how many passages search_docs returns by default and at most.
const (
	DefaultLimit = 5
	MaxLimit     = 20
)

// Errors of tool calls. Each reaches the client as a tool error (isError)
// whose text is the error's message, written for the model that reads it.
var (
	// ErrNotReady: the first sync of an empty index is still running.
	ErrNotReady = errors.New("docent is still indexing its sources for the first time; try again in a minute")
	// ErrBusy: admission refused the call before any work was done.
	ErrBusy = errors.New("docent is answering too many questions at once; try again in a few seconds")
	// ErrUnknownDocument: no live document in the caller's scope has that ID or URL.
	ErrUnknownDocument = errors.New("unknown document")
	// ErrInternal: something failed inside docent; the detail is logged.
	ErrInternal = errors.New("docent failed to do this (the error is in its log); try again later")
)

// RateError is the error of a call over its token's rate.
type RateError struct {
	// PerMinute is the token's rate; RetryAfter how long until the next call.
	PerMinute  int
	RetryAfter time.Duration
}

// Error says the rate and when to try again.
func (e *RateError) Error() string {
	s := "over rate: this token is over its rate of requests per minute"
	if e.PerMinute > 0 {
		s = "over rate: this token may make " + strconv.Itoa(e.PerMinute) + " requests a minute"
	}
	return s + "; try again in " + strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))) + "s"
}

// SearchInput are search_docs' arguments.
type SearchInput struct {
	Query  string   `json:"query" jsonschema:"what to look for, in plain words or keywords (a question works too)"`
	Source string   `json:"source,omitempty" jsonschema:"only search this source (a configured source name, as the passages' source field shows); omit to search every source"`
	Labels []string `json:"labels,omitempty" jsonschema:"only passages of documents carrying at least one of these labels; omit for any"`
	Limit  int      `json:"limit,omitempty" jsonschema:"how many passages to return, best first (default 5, at most 20)"`
}

// Passage is one ranked passage of search_docs.
type Passage struct {
	Rank      int      `json:"rank" jsonschema:"the passage's rank, 1 for the best match"`
	Title     string   `json:"title" jsonschema:"the document's title"`
	Section   string   `json:"section" jsonschema:"the heading path of the passage inside the document, outermost first, joined by ' › '; empty before the first heading"`
	URL       string   `json:"url" jsonschema:"where a person reads the passage (with the section's anchor when known); cite this link"`
	DocID     string   `json:"doc_id" jsonschema:"the document's ID: pass it to get_document to read the whole document"`
	Source    string   `json:"source" jsonschema:"the configured source the document comes from"`
	Labels    []string `json:"labels" jsonschema:"the document's labels"`
	UpdatedAt string   `json:"updated_at" jsonschema:"when the document last changed at its source (RFC 3339); empty when unknown"`
	Text      string   `json:"text" jsonschema:"the passage, as markdown"`
	Score     float64  `json:"score" jsonschema:"the fused retrieval score; higher is better, comparable only within one search"`
}

// SearchOutput is search_docs' result.
type SearchOutput struct {
	Query    string    `json:"query" jsonschema:"the query searched"`
	Passages []Passage `json:"passages" jsonschema:"the passages, best first; empty when nothing matched"`
}

// AskInput are ask_docs' arguments.
type AskInput struct {
	Question string `json:"question" jsonschema:"the question, in plain words, as a person would ask it"`
	Source   string `json:"source,omitempty" jsonschema:"only answer from this source (a configured source name); omit to use every source"`
}

// AnswerSource is one numbered source of an answer.
type AnswerSource struct {
	N         int    `json:"n" jsonschema:"the number the answer's [n] markers refer to"`
	Title     string `json:"title" jsonschema:"the document's title"`
	Section   string `json:"section" jsonschema:"the cited section's heading path, joined by ' › '; empty for the top of the page"`
	URL       string `json:"url" jsonschema:"the link to the cited section; show it with the answer"`
	DocID     string `json:"doc_id" jsonschema:"the document's ID, for get_document"`
	UpdatedAt string `json:"updated_at" jsonschema:"when the document last changed (RFC 3339); empty when unknown"`
}

// AskOutput is ask_docs' result.
type AskOutput struct {
	Status  string         `json:"status" jsonschema:"answered: the docs cover the question and the answer cites them; uncertain: docent could not confirm an answer, asserts no fact and links the closest page; not_found: the docs do not cover it (say so, do not guess)"`
	Answer  string         `json:"answer" jsonschema:"the answer text with [n] citation markers (for not_found, a message saying the docs do not cover it)"`
	Sources []AnswerSource `json:"sources" jsonschema:"the numbered sources the answer cites; empty for not_found"`
	TurnID  int64          `json:"turn_id" jsonschema:"the stored turn: admins read its full retrieval trace in docent's console"`
}

// DocumentInput are get_document's arguments: one of the two.
type DocumentInput struct {
	DocID string `json:"doc_id,omitempty" jsonschema:"the document's ID, as search_docs passages and ask_docs sources give it"`
	URL   string `json:"url,omitempty" jsonschema:"or the document's URL, as a passage or source links it (a #section anchor is ignored)"`
}

// DocumentOutput is get_document's result.
type DocumentOutput struct {
	DocID     string   `json:"doc_id" jsonschema:"the document's ID"`
	Title     string   `json:"title" jsonschema:"the document's title"`
	URL       string   `json:"url" jsonschema:"where a person reads the document"`
	Source    string   `json:"source" jsonschema:"the configured source the document comes from"`
	Space     string   `json:"space" jsonschema:"the wiki space, repository or product it belongs to; empty when none"`
	Labels    []string `json:"labels" jsonschema:"the document's labels"`
	Owner     string   `json:"owner" jsonschema:"the person or team responsible for it; empty when unknown"`
	Author    string   `json:"author" jsonschema:"the last person to change it; empty when unknown"`
	UpdatedAt string   `json:"updated_at" jsonschema:"when it last changed at its source (RFC 3339); empty when unknown"`
	Markdown  string   `json:"markdown" jsonschema:"the document as docent indexed it: its headings and text in order, as markdown"`
}

const (
	searchDescription = "Search the organisation's documentation (wikis, handbooks, runbooks, docs in git) and get the " +
		"best-matching passages, best first. Each passage has its document's title and section, a URL to cite, " +
		"its source, labels and last-updated date, and the passage text. Hybrid keyword and semantic search, the " +
		"same retrieval ask_docs answers from. Use it to look things up yourself or gather context; use ask_docs " +
		"for a direct answer with citations, and get_document to read the whole document a passage comes from."
	askDescription = "Ask a question in plain words and get a grounded answer from the organisation's documentation: " +
		"the answer with [n] citation markers, the numbered sources it cites (title, section, URL, updated date) and " +
		"a status. answered: the docs cover it and the answer cites them. uncertain: docent could not confirm an " +
		"answer; it asserts no fact and links the closest page. not_found: the docs do not cover it; say so rather " +
		"than guess. Use it for questions a person would ask (\"How do I reset my VPN token?\"); pass the answer on " +
		"with its citations and links."
	documentDescription = "Read one whole document as docent indexed it: its markdown (headings and text in order) " +
		"with its title, URL, source, labels, owner and last-updated date. Give doc_id (from a search_docs passage " +
		"or an ask_docs source) or url (a link they returned). Use it when a passage is not enough."
)

// addTools registers the three tools with their schemas.
func (s *Server) addTools() error {
	searchIn, err := schemaFor[SearchInput](func(p map[string]*jsonschema.Schema) {
		p["query"].MinLength = ptr(1)
		p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(MaxLimit))
	})
	if err != nil {
		return err
	}
	askIn, err := schemaFor[AskInput](func(p map[string]*jsonschema.Schema) { p["question"].MinLength = ptr(1) })
	if err != nil {
		return err
	}
	docIn, err := schemaFor[DocumentInput](nil)
	if err != nil {
		return err
	}
	searchOut, err := schemaFor[SearchOutput](nil)
	if err != nil {
		return err
	}
	askOut, err := schemaFor[AskOutput](func(p map[string]*jsonschema.Schema) {
		p["status"].Enum = []any{string(docent.StatusAnswered), string(docent.StatusUncertain), string(docent.StatusNotFound)}
	})
	if err != nil {
		return err
	}
	docOut, err := schemaFor[DocumentOutput](nil)
	if err != nil {
		return err
	}

	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	sdk.AddTool(s.srv, &sdk.Tool{Name: ToolSearch, Title: "Search the docs", Description: searchDescription,
		InputSchema: searchIn, OutputSchema: searchOut, Annotations: readOnly}, s.search)
	// ask_docs stores a turn, so it is not read-only; asking twice is harmless.
	sdk.AddTool(s.srv, &sdk.Tool{Name: ToolAsk, Title: "Ask the docs", Description: askDescription,
		InputSchema: askIn, OutputSchema: askOut,
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}}, s.ask)
	sdk.AddTool(s.srv, &sdk.Tool{Name: ToolGetDocument, Title: "Read a document", Description: documentDescription,
		InputSchema: docIn, OutputSchema: docOut, Annotations: readOnly}, s.getDocument)
	return nil
}

// schemaFor infers T's schema, makes every list a plain "array" (the
// outputs never hold null lists, and some clients take only one type per
// property), and lets tweak add constraints to its properties.
func schemaFor[T any](tweak func(map[string]*jsonschema.Schema)) (*jsonschema.Schema, error) {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: schema: %w", err)
	}
	plainArrays(sch)
	if tweak != nil {
		tweak(sch.Properties)
	}
	return sch, nil
}

// plainArrays turns each ["null", "array"] type in sch into "array".
func plainArrays(sch *jsonschema.Schema) {
	if sch == nil {
		return
	}
	if slices.Equal(sch.Types, []string{"null", "array"}) {
		sch.Types, sch.Type = nil, "array"
	}
	plainArrays(sch.Items)
	for _, p := range sch.Properties {
		plainArrays(p)
	}
}

func ptr[T any](v T) *T { return &v }

// begin does what every call does first: follow the index, refuse while
// not ready, charge the caller's rate. It returns the caller (zero and
// false for an anonymous one).
func (s *Server) begin(ctx context.Context, req *sdk.CallToolRequest) (docent.Caller, bool, error) {
	var extra *sdk.RequestExtra
	if req != nil {
		extra = req.Extra
	}
	return s.start(ctx, extra)
}

// start is begin for any request with its transport's extra.
func (s *Server) start(ctx context.Context, extra *sdk.RequestExtra) (docent.Caller, bool, error) {
	if s.opts.Refresh != nil {
		if err := s.opts.Refresh(ctx); err != nil {
			s.log.ErrorContext(ctx, "mcp: refresh the index", slog.Any("error", err))
			return docent.Caller{}, false, ErrInternal
		}
	}
	if s.opts.Ready != nil && !s.opts.Ready() {
		return docent.Caller{}, false, ErrNotReady
	}
	c, ok := callerOf(extra)
	if ok && s.opts.Rate != nil {
		if wait, allowed := s.opts.Rate.Allow(c); !allowed {
			return c, ok, &RateError{PerMinute: c.RatePerMinute, RetryAfter: wait}
		}
	}
	return c, ok, nil
}

// admit takes an admission slot for caller c; the returned function
// releases it.
func (s *Server) admit(ctx context.Context, c docent.Caller) (func(), error) {
	if s.opts.Admission == nil {
		return func() {}, nil
	}
	release, err := s.opts.Admission.Acquire(ctx, Platform, c.Name)
	if err != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrBusy
	}
	return release, nil
}

// shed tells OnShed of a refused ask.
func (s *Server) shed(reason string) {
	if s.opts.OnShed != nil {
		s.opts.OnShed(reason)
	}
}

// filter builds the retrieval filter of a call: the source and labels
// asked for, narrowed to the caller's scope.
func (s *Server) filter(c docent.Caller, source string, labels []string) (docent.Filter, error) {
	var f docent.Filter
	if source = strings.TrimSpace(source); source != "" {
		// A scoped caller learns the same of a source outside its scope as
		// of one that does not exist.
		if len(c.Scope.Sources) > 0 && !slices.Contains(c.Scope.Sources, source) {
			return f, fmt.Errorf("this token may not read source %q: %w; it may read: %s", source, docent.ErrOutOfScope,
				strings.Join(s.visibleSources(c), ", "))
		}
		if len(s.opts.Sources) > 0 && !slices.Contains(s.opts.Sources, source) {
			return f, fmt.Errorf("no source is named %q; the sources are: %s", source, strings.Join(s.visibleSources(c), ", "))
		}
		f.Sources = []string{source}
	}
	for _, l := range labels {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(f.Labels, l) {
			f.Labels = append(f.Labels, l)
		}
	}
	f, err := c.Scope.Restrict(f)
	if err != nil {
		return f, fmt.Errorf("this token may not read that: %w", err)
	}
	return f, nil
}

// visibleSources are the configured sources the caller's scope allows.
func (s *Server) visibleSources(c docent.Caller) []string {
	if len(c.Scope.Sources) == 0 {
		return s.opts.Sources
	}
	var out []string
	for _, src := range s.opts.Sources {
		if slices.Contains(c.Scope.Sources, src) {
			out = append(out, src)
		}
	}
	return out
}

// search is search_docs.
func (s *Server) search(ctx context.Context, req *sdk.CallToolRequest, in SearchInput) (*sdk.CallToolResult, SearchOutput, error) {
	out := SearchOutput{Query: strings.TrimSpace(in.Query), Passages: []Passage{}}
	c, _, err := s.begin(ctx, req)
	if err != nil {
		return nil, out, err
	}
	if out.Query == "" {
		return nil, out, errors.New("query is empty: say what to look for")
	}
	f, err := s.filter(c, in.Source, in.Labels)
	if err != nil {
		return nil, out, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	release, err := s.admit(ctx, c)
	if err != nil {
		return nil, out, err
	}
	defer release()
	res, err := s.opts.Retriever.Retrieve(ctx, search.Request{Text: out.Query, Filter: f, K: limit})
	if err != nil {
		s.log.ErrorContext(ctx, "mcp: search", slog.Any("error", err))
		return nil, out, ErrInternal
	}
	for _, h := range res.Hits {
		ch := h.Chunk
		// A chunk the index no longer holds (a sync removed it since the
		// ranking was read) or one outside the scope is never shown.
		if ch.Text == "" || !c.Scope.Allows(ch.Source, ch.Labels) {
			continue
		}
		out.Passages = append(out.Passages, Passage{
			Rank: len(out.Passages) + 1, Title: ch.Title, Section: strings.Join(ch.Section, " › "), URL: ch.URL,
			DocID: ch.DocID, Source: ch.Source, Labels: nonNil(ch.Labels), UpdatedAt: stamp(ch.UpdatedAt),
			Text: body(ch), Score: h.Score,
		})
		if len(out.Passages) == limit {
			break
		}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: passagesText(out)}}}, out, nil
}

// passagesText renders search results for a model that reads text.
func passagesText(out SearchOutput) string {
	if len(out.Passages) == 0 {
		return "No passage matches " + strconv.Quote(out.Query) + "."
	}
	var b strings.Builder
	for i, p := range out.Passages {
		if i > 0 {
			b.WriteString("\n---\n\n")
		}
		head := p.Title
		if p.Section != "" {
			head += " › " + p.Section
		}
		fmt.Fprintf(&b, "[%d] %s\n%s\nsource %s", p.Rank, head, p.URL, p.Source)
		if p.UpdatedAt != "" {
			b.WriteString(", updated " + p.UpdatedAt[:min(10, len(p.UpdatedAt))])
		}
		fmt.Fprintf(&b, ", doc_id %s\n\n%s\n", p.DocID, p.Text)
	}
	return b.String()
}

// ask is ask_docs.
func (s *Server) ask(ctx context.Context, req *sdk.CallToolRequest, in AskInput) (*sdk.CallToolResult, AskOutput, error) {
	out := AskOutput{Sources: []AnswerSource{}}
	c, named, err := s.begin(ctx, req)
	if errors.Is(err, ErrNotReady) {
		s.shed("not_ready")
	}
	if err != nil {
		return nil, out, err
	}
	question := strings.TrimSpace(in.Question)
	if question == "" {
		return nil, out, errors.New("question is empty: ask it in plain words")
	}
	f, err := s.filter(c, in.Source, nil)
	if err != nil {
		return nil, out, err
	}
	q := docent.Question{Text: question, Platform: Platform, Filter: f}
	if named {
		q.User = c.Name
	}
	release, err := s.admit(ctx, c)
	if errors.Is(err, ErrBusy) {
		s.shed("overloaded")
	}
	if err != nil {
		return nil, out, err
	}
	defer release()
	actx, cancel := context.WithTimeout(ctx, s.opts.AskTimeout)
	defer cancel()
	turn, err := s.opts.Asker.Ask(actx, q)
	switch {
	case errors.Is(err, docent.ErrEmptyQuestion):
		return nil, out, errors.New("question is empty: ask it in plain words")
	case err != nil:
		s.log.ErrorContext(ctx, "mcp: ask", slog.Int64("turn", turn.ID), slog.Any("error", err))
		msg := "the answer could not be made"
		if turn.ID != 0 {
			msg += "; the error is recorded with turn " + strconv.FormatInt(turn.ID, 10)
		}
		return nil, out, errors.New(msg + "; try again later")
	}
	a := turn.Answer
	if named && !c.Scope.IsZero() {
		// The filter kept retrieval inside the scope; each cited document
		// is checked again, against the registry, before it is shown.
		for _, cit := range a.Citations {
			if !s.inScope(ctx, c, cit.DocID) {
				s.log.WarnContext(ctx, "mcp: an answer cited a document outside the token's scope; withheld",
					slog.Int64("turn", turn.ID), slog.String("doc", cit.DocID), slog.String("token", c.Name))
				return nil, out, errors.New("the index changed while answering; ask again")
			}
		}
	}
	out.Status, out.Answer, out.TurnID = string(a.Status), a.Text, turn.ID
	if strings.TrimSpace(out.Answer) == "" || a.Status == docent.StatusNotFound {
		out.Answer = strings.TrimSpace(s.opts.Format(docent.Answer{Status: a.Status, Text: a.Text}))
	}
	for _, cit := range a.Citations {
		out.Sources = append(out.Sources, AnswerSource{N: cit.N, Title: cit.Title, Section: cit.Section, URL: cit.URL,
			DocID: cit.DocID, UpdatedAt: stamp(cit.UpdatedAt)})
	}
	text := strings.TrimSpace(s.opts.Format(a)) + "\n\nstatus: " + out.Status
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
}

// inScope reports whether document id is live in the registry and inside
// the caller's scope.
func (s *Server) inScope(ctx context.Context, c docent.Caller, id string) bool {
	rec, err := s.opts.Documents.Document(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.ErrorContext(ctx, "mcp: document", slog.String("doc", id), slog.Any("error", err))
		}
		return false
	}
	return c.Scope.Allows(rec.Source, rec.Labels)
}

// getDocument is get_document.
func (s *Server) getDocument(ctx context.Context, req *sdk.CallToolRequest, in DocumentInput) (*sdk.CallToolResult, DocumentOutput, error) {
	out := DocumentOutput{Labels: []string{}}
	c, _, err := s.begin(ctx, req)
	if err != nil {
		return nil, out, err
	}
	id, link := strings.TrimSpace(in.DocID), strings.TrimSpace(in.URL)
	if id == "" && link == "" {
		return nil, out, errors.New("give doc_id or url: the document's ID or link, as search_docs or ask_docs returned it")
	}
	doc, err := s.document(ctx, c, id, link)
	if err != nil {
		return nil, out, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\nsource %s, doc_id %s", doc.Title, doc.URL, doc.Source, doc.DocID)
	if doc.UpdatedAt != "" {
		b.WriteString(", updated " + doc.UpdatedAt[:10])
	}
	b.WriteString("\n\n" + doc.Markdown)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, doc, nil
}

// document looks a document up by ID (or else by URL) and puts it
// together. A document that is unknown, deleted or outside the caller's
// scope is an error wrapping ErrUnknownDocument: the caller learns nothing
// of it.
func (s *Server) document(ctx context.Context, c docent.Caller, id, link string) (DocumentOutput, error) {
	var rec docent.DocRecord
	var what string
	var err error
	if id != "" {
		what = "doc_id " + strconv.Quote(id)
		rec, err = s.opts.Documents.Document(ctx, id)
	} else {
		what = "url " + strconv.Quote(link)
		rec, err = s.opts.Documents.DocumentByURL(ctx, link)
	}
	unknown := fmt.Errorf("%w: no document has %s; use the doc_id or url of a search_docs passage or an ask_docs source", ErrUnknownDocument, what)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return DocumentOutput{}, unknown
	case err != nil:
		s.log.ErrorContext(ctx, "mcp: get document", slog.String("what", what), slog.Any("error", err))
		return DocumentOutput{}, ErrInternal
	}
	if !rec.DeletedAt.IsZero() || !c.Scope.Allows(rec.Source, rec.Labels) {
		return DocumentOutput{}, unknown
	}
	chunks, err := s.opts.Chunks.Chunks(ctx, rec.ChunkIDs)
	if err != nil {
		s.log.ErrorContext(ctx, "mcp: document chunks", slog.String("doc", rec.ID), slog.Any("error", err))
		return DocumentOutput{}, ErrInternal
	}
	return DocumentOutput{DocID: rec.ID, Title: rec.Title, URL: rec.URL, Source: rec.Source, Space: rec.Space,
		Labels: nonNil(rec.Labels), Owner: rec.Owner, Author: rec.Author, UpdatedAt: stamp(rec.UpdatedAt),
		Markdown: documentMarkdown(rec.Title, chunks)}, nil
}

// stamp formats a time for the outputs: RFC 3339 in UTC, "" when zero.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
