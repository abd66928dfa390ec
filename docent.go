// Package docent holds the domain types every docent package shares:
// documents from sources, the chunks they are split into, search hits,
// questions, answers with citations, and the turns that record them.
//
// The packages beneath it (config, connectors, search, answer, store, eval)
// define their own small contracts next to the code that consumes them.
package docent

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// Document is one page from a source, normalized to markdown.
type Document struct {
	// ID is stable across syncs: "<source>:<path>" for git, the page id for wikis.
	ID string `json:"id"`
	// Source is the configured name of the source the document came from.
	Source string `json:"source"`
	// Path is the document's path (git) or page id (wikis) inside its source.
	Path string `json:"path"`
	// URL is where a person reads the document; citations link to it.
	URL string `json:"url"`
	// Title is the document title (front matter, first H1, or file name).
	Title string `json:"title"`
	// Space is the wiki space, repository or product the document belongs to.
	Space string `json:"space,omitempty"`
	// Labels are free-form tags (front matter labels, wiki labels).
	Labels []string `json:"labels,omitempty"`
	// Owner is the person or team responsible for the document, if known.
	Owner string `json:"owner,omitempty"`
	// Author is the last person to change the document, if known.
	Author string `json:"author,omitempty"`
	// UpdatedAt is when the content last changed at the source.
	UpdatedAt time.Time `json:"updated_at"`
	// Body is the document content as markdown, without front matter.
	Body string `json:"-"`
	// Normalized says what normalising the source's markup did to Body
	// (static-site syntax removed or expanded, a front matter block that
	// was not valid); zero for clean markdown.
	Normalized Normalized `json:"normalized,omitzero"`
}

// Normalized is what the markdown normaliser did to one document (see
// connectors.Normalize).
type Normalized struct {
	// Dropped counts the shortcodes, template tags and components that
	// held no text and were removed.
	Dropped int `json:"dropped,omitempty"`
	// Included lists the files of the same source expanded into the body
	// (snippets, include-markdown, Liquid includes, MDX partials).
	Included []string `json:"included,omitempty"`
	// Missing lists the include targets that could not be read; their
	// directive was dropped.
	Missing []string `json:"missing,omitempty"`
	// FrontMatter says why the front matter block was not used (not valid
	// YAML or TOML, a field of the wrong type); the body is indexed all
	// the same. Empty when the block was fine or absent.
	FrontMatter string `json:"front_matter,omitempty"`
}

// IsZero reports whether normalising changed nothing worth reporting.
func (n Normalized) IsZero() bool {
	return n.Dropped == 0 && len(n.Included) == 0 && len(n.Missing) == 0 && n.FrontMatter == ""
}

// Chunk is a retrievable piece of a document: a section or part of one.
// Document metadata is copied onto every chunk so that filters apply inside
// the index.
type Chunk struct {
	// ID is a content hash: it stays the same across syncs while the
	// document, section and text are unchanged.
	ID string `json:"id"`
	// DocID is the Document.ID the chunk belongs to.
	DocID string `json:"doc_id"`
	// Ord is the chunk's position within its document, from 0.
	Ord int `json:"ord"`
	// Source, Space, Labels and UpdatedAt are copied from the document.
	Source    string    `json:"source"`
	Space     string    `json:"space,omitempty"`
	Labels    []string  `json:"labels,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	// Title is the document title.
	Title string `json:"title"`
	// Section is the heading path inside the document, outermost first.
	Section []string `json:"section,omitempty"`
	// URL links to the document, with an anchor for the section when known.
	URL string `json:"url"`
	// Text is the chunk body with "Title > Section > Subsection" prepended.
	Text string `json:"text"`
	// Injection is the passage of Text that addresses an AI assistant
	// rather than a reader (see Hit.Injection), "" when there is none. It
	// is derived from Text when the chunk is indexed: index backends set
	// it on Upsert (search.InjectionOf) and return it with the chunk, so
	// that no search scans chunk text for it; a chunk handed to Upsert
	// need not set it.
	Injection string `json:"injection,omitempty"`
	// Vector is the chunk embedding; empty until the embedder has run.
	Vector []float32 `json:"-"`
}

// ChunkHeading is the "Title > Section > Subsection" line the chunker
// puts at the start of a chunk's Text: the title (when not blank) and the
// section path joined by " > ".
func ChunkHeading(title string, section []string) string {
	parts := make([]string, 0, len(section)+1)
	if t := strings.TrimSpace(title); t != "" {
		parts = append(parts, t)
	}
	parts = append(parts, section...)
	return strings.Join(parts, " > ")
}

// Body is the chunk's Text without its heading line (see ChunkHeading):
// what the section itself says. A chunk whose Text does not start with
// the heading line is all body.
func (c Chunk) Body() string {
	h := ChunkHeading(c.Title, c.Section)
	if h == "" {
		return c.Text
	}
	if rest, ok := strings.CutPrefix(c.Text, h+"\n\n"); ok {
		return rest
	}
	if c.Text == h {
		return ""
	}
	return c.Text
}

// Filter restricts retrieval by metadata. Zero fields do not restrict.
// Filters apply inside every retriever, before ranking is truncated.
type Filter struct {
	// Sources keeps chunks whose Source is one of these.
	Sources []string `json:"sources,omitempty"`
	// Spaces keeps chunks whose Space is one of these.
	Spaces []string `json:"spaces,omitempty"`
	// Labels keeps chunks that carry at least one of these labels.
	Labels []string `json:"labels,omitempty"`
	// UpdatedAfter keeps chunks updated at or after this time.
	UpdatedAfter time.Time `json:"updated_after,omitempty"`
	// UpdatedBefore keeps chunks updated before this time.
	UpdatedBefore time.Time `json:"updated_before,omitempty"`
}

// IsZero reports whether the filter restricts nothing.
func (f Filter) IsZero() bool {
	return len(f.Sources) == 0 && len(f.Spaces) == 0 && len(f.Labels) == 0 &&
		f.UpdatedAfter.IsZero() && f.UpdatedBefore.IsZero()
}

// Match reports whether c passes the filter: its source and space are
// among those listed, it carries one of the labels, and UpdatedAt lies in
// [UpdatedAfter, UpdatedBefore). This is the reference meaning every index
// backend implements inside its retrievers.
func (f Filter) Match(c Chunk) bool {
	if len(f.Sources) > 0 && !slices.Contains(f.Sources, c.Source) {
		return false
	}
	if len(f.Spaces) > 0 && !slices.Contains(f.Spaces, c.Space) {
		return false
	}
	if len(f.Labels) > 0 && !slices.ContainsFunc(c.Labels, func(l string) bool { return slices.Contains(f.Labels, l) }) {
		return false
	}
	if !f.UpdatedAfter.IsZero() && c.UpdatedAt.Before(f.UpdatedAfter) {
		return false
	}
	if !f.UpdatedBefore.IsZero() && !c.UpdatedAt.Before(f.UpdatedBefore) {
		return false
	}
	return true
}

// Hit is one retrieved chunk with the evidence of how it ranked.
type Hit struct {
	// Chunk is the retrieved chunk (Vector may be empty).
	Chunk Chunk `json:"chunk"`
	// Score is the fused score that orders hits; higher is better.
	Score float64 `json:"score"`
	// KeywordRank is the 1-based BM25 rank, 0 when BM25 did not return it.
	KeywordRank int `json:"keyword_rank"`
	// KeywordScore is the raw BM25 score (higher is better), 0 when absent.
	KeywordScore float64 `json:"keyword_score"`
	// VectorRank is the 1-based vector rank, 0 when vector search did not return it.
	VectorRank int `json:"vector_rank"`
	// VectorScore is the cosine similarity, 0 when absent.
	VectorScore float64 `json:"vector_score"`
	// RerankScore is set when a reranker reordered the hits.
	RerankScore float64 `json:"rerank_score,omitempty"`
	// Relevance is the answer pipeline's absolute relevance of the hit to
	// the question, the value the not-found threshold is measured against.
	Relevance float64 `json:"relevance,omitempty"`
	// Duplicates are the chunks of other documents (or of other places
	// in this one) whose text is exactly this chunk's: the ranking keeps
	// one of them and lists the others here, so that every document that
	// holds the text can still be cited.
	Duplicates []ChunkRef `json:"duplicates,omitempty"`
	// Injection, when set, is the passage of the chunk that addresses an
	// AI assistant rather than a reader ("ignore previous instructions",
	// "SYSTEM:"), found by internal/injection: flagged in the trace and
	// the console, and never quoted as an answer.
	Injection string `json:"injection,omitempty"`
}

// ChunkRef names a chunk and where it is: enough to cite it.
type ChunkRef struct {
	// ID and DocID identify the chunk and its document.
	ID    string `json:"id"`
	DocID string `json:"doc_id"`
	// Title, Section and URL are the chunk's.
	Title   string   `json:"title"`
	Section []string `json:"section,omitempty"`
	URL     string   `json:"url"`
}

// Question is what a person asked, with where they asked it.
type Question struct {
	// Text is the question as asked.
	Text string `json:"text"`
	// Platform is where it was asked: "api", "cli", "slack", "discord", "console".
	Platform string `json:"platform,omitempty"`
	// Channel and Thread identify the conversation on the platform.
	Channel string `json:"channel,omitempty"`
	Thread  string `json:"thread,omitempty"`
	// User identifies the asker on the platform.
	User string `json:"user,omitempty"`
	// Filter scopes retrieval (for example a channel's sources).
	Filter Filter `json:"filter,omitempty"`
	// History holds the earlier exchanges of the conversation, oldest
	// first, so that a follow-up ("and for contractors?") can be made
	// standalone. Empty for a first question.
	History []Exchange `json:"history,omitempty"`
}

// Exchange is one earlier question and the answer docent gave to it.
type Exchange struct {
	// Question is what was asked.
	Question string `json:"question"`
	// Answer is the reply text (citation markers included).
	Answer string `json:"answer,omitempty"`
}

// ErrEmptyQuestion is returned when a question has no text.
var ErrEmptyQuestion = errors.New("question is empty")

// ErrStorageUnavailable is wrapped by the errors of writes the database
// could not store (the disk is full, an I/O error, a read-only or locked
// file), as opposed to writes it refused (an unknown ID, a constraint).
// The store returns it; the API answers it with 503 storage_unavailable.
var ErrStorageUnavailable = errors.New("storage unavailable")

// Status says how a question was handled.
type Status string

// Statuses of an answer.
const (
	// StatusAnswered means the answer is grounded in cited sources.
	StatusAnswered Status = "answered"
	// StatusUncertain means docent could not confirm an answer: it asserts
	// no fact, links the closest page and offers a person.
	StatusUncertain Status = "uncertain"
	// StatusNotFound means the docs do not cover the question.
	StatusNotFound Status = "not_found"
	// StatusError means the pipeline failed.
	StatusError Status = "error"
	// StatusSmallTalk means the message was a greeting, thanks or an
	// acknowledgement, not a question: it got a short reply citing
	// nothing, and it is no miss.
	StatusSmallTalk Status = "small_talk"
)

// Citation is a numbered source that an answer cites as [N].
type Citation struct {
	// N is the number used in the answer text, from 1.
	N int `json:"n"`
	// DocID and ChunkID identify the cited chunk.
	DocID   string `json:"doc_id"`
	ChunkID string `json:"chunk_id"`
	// Title is the document title; Section is the heading path joined by " › ".
	Title   string `json:"title"`
	Section string `json:"section,omitempty"`
	// URL links to the source.
	URL string `json:"url"`
	// UpdatedAt is when the source last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// Answer is the reply to a question.
type Answer struct {
	// Text is the answer with [N] citation markers, followed by nothing else;
	// renderers add the source list from Citations.
	Text string `json:"text"`
	// Citations are the sources the text cites, numbered from 1.
	Citations []Citation `json:"citations"`
	// Status says whether the docs answered the question.
	Status Status `json:"status"`
	// Trace records how the answer was made.
	Trace Trace `json:"trace"`
}

// Trace is the retrieval log of one answer: everything needed to see why
// it came out as it did.
type Trace struct {
	// Query is the query sent to retrieval (after any rewriting).
	Query string `json:"query"`
	// SubQueries are the parts a multi-part question was split into, each
	// retrieved on its own; empty for a single question.
	SubQueries []string `json:"sub_queries,omitempty"`
	// Candidates are the retrieved hits, in the order the answer stages
	// saw them (fused, then reranked), each with its keyword rank, vector
	// rank, fused score, rerank score and relevance.
	Candidates []Hit `json:"candidates"`
	// Used lists the chunk IDs the answer drew on, in citation order.
	Used []string `json:"used"`
	// Threshold is the answer threshold applied, and TopScore the score
	// the decision rule compared with it (see Decision).
	Threshold float64 `json:"threshold"`
	TopScore  float64 `json:"top_score"`
	// Decision says how the outcome was decided; nil for small talk and
	// for turns stored before it was recorded.
	Decision *Decision `json:"decision,omitempty"`
	// Conflict is set when the sources used disagree; it names the older
	// and newer documents.
	Conflict string `json:"conflict,omitempty"`
	// Model is the language model that wrote the answer ("" for the
	// offline extractive answer); Prompt is what it was sent.
	Model  string `json:"model,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// TokensIn and TokensOut count the model tokens of every LLM call.
	TokensIn  int `json:"tokens_in,omitempty"`
	TokensOut int `json:"tokens_out,omitempty"`
	// CitationsRemoved counts citation markers the verifier dropped because
	// they named no given source; Uncited counts sentences that made a
	// claim without a citation.
	CitationsRemoved int `json:"citations_removed,omitempty"`
	Uncited          int `json:"uncited,omitempty"`
	// Error is why the turn failed (secrets masked), "" when it did not.
	Error string `json:"error,omitempty"`
	// Stages are the pipeline stages in order, with latency and output.
	Stages []Stage `json:"stages"`
}

// Decision is how an answer's outcome was decided: the evidence the gate
// measured, the rule that mapped it to an outcome, and whether a language
// model was asked.
type Decision struct {
	// Rule names the rule: "logistic" (the offline answerer's calibrated
	// rule), "plausible" (a model answerer's pre-check) or "always" (a
	// calibration run).
	Rule string `json:"rule"`
	// Features are the gate's measurements of the closest passage, by
	// name (coverage, cosine, ...).
	Features map[string]float64 `json:"features,omitempty"`
	// Reason says in a few words why the rule decided so.
	Reason string `json:"reason,omitempty"`
	// Sources are the IDs of the chunks given to the generator, in order.
	Sources []string `json:"sources,omitempty"`
	// NotSent says, by chunk ID, why a candidate the gate read was not
	// among the sources it picked: below the gate's floor, a duplicate of
	// a source, another chunk of a page already sent, cut by the source
	// limit.
	NotSent map[string]string `json:"not_sent,omitempty"`
	// ModelAsked is set when a language model was asked to write the
	// answer; NotAsked says why it was not, when a model answerer did not
	// ask it.
	ModelAsked bool   `json:"model_asked,omitempty"`
	NotAsked   string `json:"not_asked,omitempty"`
}

// Stage is one pipeline stage of an answer: how long it took and what it
// produced.
type Stage struct {
	// Name is the stage: "rewrite", "retrieve", "rerank", "gate",
	// "generate" or "verify".
	Name string `json:"name"`
	// Duration is how long it took; 0 when it did not run.
	Duration time.Duration `json:"duration_ns"`
	// Detail says in a few words what the stage produced ("skipped" when
	// it did not run).
	Detail string `json:"detail,omitempty"`
}

// Turn is one question and its answer, as stored.
type Turn struct {
	// ID is assigned by the store.
	ID int64 `json:"id"`
	// Question is what was asked.
	Question Question `json:"question"`
	// Answer is what docent replied, with its trace.
	Answer Answer `json:"answer"`
	// CreatedAt is when the question arrived.
	CreatedAt time.Time `json:"created_at"`
	// Delivery says whether the reply reached the asker's thread, for a
	// chat turn: "" until (or unless) a chat adapter posts it.
	Delivery Delivery `json:"delivery,omitempty"`
	// DeliveryError is the platform's error when the reply could not be
	// posted (secrets and URLs masked).
	DeliveryError string `json:"delivery_error,omitempty"`
}

// Delivery is whether a chat turn's reply was posted. Turns answered
// over the API, MCP or the console have none: the answer is the
// response.
type Delivery string

// Deliveries.
const (
	// DeliveryPosted: the reply is in the thread.
	DeliveryPosted Delivery = "posted"
	// DeliveryFailed: the platform refused the reply (the asker got a
	// short apology, when that could be posted).
	DeliveryFailed Delivery = "failed"
)

// DocRecord is what the document registry remembers of one indexed
// document: its metadata, the content hash the sync engine diffs against,
// and the IDs of the chunks the index holds for it.
type DocRecord struct {
	// ID is the document ID ("<source>:<path>").
	ID string `json:"id"`
	// Source is the configured source name.
	Source string `json:"source"`
	// Path, URL, Title, Space, Labels, Owner and Author are copied from the document.
	Path   string   `json:"path"`
	URL    string   `json:"url"`
	Title  string   `json:"title"`
	Space  string   `json:"space,omitempty"`
	Labels []string `json:"labels,omitempty"`
	Owner  string   `json:"owner,omitempty"`
	Author string   `json:"author,omitempty"`
	// ContentHash is the engine's hash of the indexed content and metadata;
	// "" forces the next sync to re-index the document.
	ContentHash string `json:"content_hash"`
	// UpdatedAt is when the document last changed at the source.
	UpdatedAt time.Time `json:"updated_at"`
	// FirstSeen is when the registry first recorded the document; set by the registry.
	FirstSeen time.Time `json:"first_seen"`
	// LastSeen is when a sync last wrote the document; set by the registry.
	LastSeen time.Time `json:"last_seen"`
	// DeletedAt is when the document was found gone from its source; zero while live.
	DeletedAt time.Time `json:"deleted_at,omitempty"`
	// ChunkIDs are the IDs of the document's chunks in the index, in order.
	ChunkIDs []string `json:"chunk_ids"`
	// Stale is what the last sync derived about the document (package
	// stale); set by the registry's readers, ignored by PutDocument.
	Stale StaleState `json:"stale"`
}

// StaleState is what a sync derives about a document from its source's
// age policy, the whole corpus and the golden set, and stores with its
// record, so that chat and the console read it as it is.
type StaleState struct {
	// After is when the document turns older than its source's policy
	// (its UpdatedAt plus MaxAgeDays); zero when it is undated or no sync
	// has derived its state yet.
	After time.Time `json:"after"`
	// MaxAgeDays is its source's age policy, in days, when derived.
	MaxAgeDays int `json:"max_age_days"`
	// Findings are the conflicts with newer documents and, for a
	// document gone from its source, the golden questions still
	// expecting it.
	Findings []StaleFinding `json:"findings,omitempty"`
}

// StaleFinding is one reason a sync flagged a document.
type StaleFinding struct {
	// Kind is "conflict" (alike sections of a newer document state other
	// amounts or carry another date) or "gone" (deleted at its source
	// while golden questions expect it).
	Kind string `json:"kind"`
	// Detail says it in words for the admin.
	Detail string `json:"detail"`
	// Other is the newer document of a conflict ("" otherwise).
	Other string `json:"other,omitempty"`
}

// DocError is one document that a sync skipped, and why; or, with
// Truncated, one it indexed only in part.
type DocError struct {
	// ID is the document ID (or the path when no ID could be formed).
	ID string `json:"id"`
	// Err says what went wrong, safe to show to an admin.
	Err string `json:"error"`
	// Retry is true when the next run lists the document again although
	// it did not change (a transient failure: a timeout, a failed
	// embedding call); false for a content problem (binary, oversized,
	// malformed), which is skipped until the document changes.
	Retry bool `json:"retry,omitempty"`
	// Truncated is set for a document that was indexed, but as only its
	// first chunks: it had more than the cap per document
	// (sync.max_chunks_per_doc). It does not count in RunResult.Failed.
	Truncated bool `json:"truncated,omitempty"`
}

// RunResult is the outcome of one sync of one source.
type RunResult struct {
	// Source is the source name.
	Source string `json:"source"`
	// Started and Finished bound the run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Seen counts the distinct documents the source named in its listing:
	// with their content, as failed, or by ID only (an incremental source
	// listing every existing ID without bodies).
	Seen int `json:"seen"`
	// Added, Updated, Unchanged and Deleted count documents by what the run did.
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Deleted   int `json:"deleted"`
	// Failed counts documents skipped with an error; Errors says why
	// (and names the documents indexed only in part, Truncated).
	Failed int        `json:"failed"`
	Errors []DocError `json:"errors,omitempty"`
	// Err is the run-level failure ("" when the run completed).
	Err string `json:"error,omitempty"`
	// Requests counts the HTTP requests a remote source made during the
	// run, retries included (0 for sources that read local files).
	Requests int `json:"requests,omitempty"`
	// Retries counts requests sent again after a failure or a 429/503.
	Retries int `json:"retries,omitempty"`
	// RateLimited counts the times the remote API asked the source to
	// wait (429 or 503 with Retry-After).
	RateLimited int `json:"rate_limited,omitempty"`
	// Waited is the time the source spent waiting on backoff, Retry-After
	// and its own rate limiter.
	Waited time.Duration `json:"waited,omitempty"`
	// Content counts what normalising and chunking the documents found:
	// markup dropped, documents that gave no chunk, documents over the
	// size limit, fragments left to the pages that include them, and the
	// documents indexed with a warning.
	Content ContentCounts `json:"content,omitzero"`
}

// ContentCounts are a sync run's counts of what the documents held (see
// RunResult.Content).
type ContentCounts struct {
	// Dropped sums, over the documents the run read, the shortcodes,
	// template tags and components without text that normalising removed.
	Dropped int `json:"dropped,omitempty"`
	// Empty counts the source's documents that give no chunk at all
	// (front matter only, or nothing but markup): they are registered but
	// nothing of them can be found.
	Empty int `json:"empty,omitempty"`
	// Oversized counts documents over a size limit: skipped (the source's
	// max_bytes or the engine's) or indexed as only their first chunks
	// (the engine's cap per document); they are among Errors too.
	Oversized int `json:"oversized,omitempty"`
	// Fragments counts files a source did not hand over as documents
	// because other documents of the source include them whole: their
	// text is indexed where it is included.
	Fragments int `json:"fragments,omitempty"`
	// Embedded counts the chunks of the run's added and updated documents
	// that the embedder embedded; Reused those that kept the vector the
	// index held under the same chunk ID (same document, section and
	// text, same embedder), so an edit pays only for the chunks it changed.
	Embedded int `json:"embedded,omitempty"`
	Reused   int `json:"reused,omitempty"`
	// Warnings lists documents indexed with a problem (front matter that
	// was not valid, an include that could not be read); unlike Errors,
	// their body is indexed.
	Warnings []DocError `json:"warnings,omitempty"`
}

// IsZero reports whether there is nothing to report.
func (c ContentCounts) IsZero() bool {
	return c.Dropped == 0 && c.Empty == 0 && c.Oversized == 0 && c.Fragments == 0 && len(c.Warnings) == 0
}

// Duration is how long the run took.
func (r RunResult) Duration() time.Duration { return r.Finished.Sub(r.Started) }

// RunStatus is the state of a recorded sync run.
type RunStatus string

// Sync run states.
const (
	// RunRunning is a run that has started and not finished (or whose
	// process died before it could say so).
	RunRunning RunStatus = "running"
	// RunOK is a run that applied every change it could (some documents
	// may still have failed; see Failed and Errors).
	RunOK RunStatus = "ok"
	// RunFailed is a run that stopped early: the source could not be read,
	// a write failed or the run was interrupted.
	RunFailed RunStatus = "failed"
)

// SyncRun is a recorded sync run.
type SyncRun struct {
	// ID identifies the run.
	ID int64 `json:"id"`
	// Status is running, ok or failed.
	Status RunStatus `json:"status"`
	// RunResult holds the source, times, counts and errors; Finished is
	// zero while the run is running.
	RunResult
}

// Rating is a person's verdict on an answer.
type Rating string

// Ratings.
const (
	RatingHelpful    Rating = "helpful"
	RatingNotHelpful Rating = "not_helpful"
)

// Feedback is one person's rating of one answer (a turn).
type Feedback struct {
	// ID is assigned by the store.
	ID int64 `json:"id"`
	// TurnID is the turn rated.
	TurnID int64 `json:"turn_id"`
	// Rating is helpful or not_helpful.
	Rating Rating `json:"rating"`
	// Reason is the optional free text the person gave.
	Reason string `json:"reason,omitempty"`
	// Platform and User identify who rated it.
	Platform string `json:"platform,omitempty"`
	User     string `json:"user,omitempty"`
	// CreatedAt is when the rating arrived.
	CreatedAt time.Time `json:"created_at"`
}

// HandoffState is where a thread's handoff to a person stands. A thread
// with no handoff is the bot's.
type HandoffState string

// Handoff states, in order.
const (
	// HandoffRequested: someone asked for a person; the escalation channel
	// was told and the bot stays quiet in the thread.
	HandoffRequested HandoffState = "requested"
	// HandoffClaimed: a person took it.
	HandoffClaimed HandoffState = "claimed"
	// HandoffResolved: the person closed it; the bot answers again.
	HandoffResolved HandoffState = "resolved"
	// HandoffFailed: the escalation channel could not be told (the
	// platform refused the post), so no person was asked; the bot answers
	// again. It is not resolved: no one resolved it, and it has no
	// ResolvedAt.
	HandoffFailed HandoffState = "failed"
	// HandoffReturned: the asker brought the bot back before a person
	// resolved it ("Bring docent back"); the bot answers again. It is not
	// resolved either.
	HandoffReturned HandoffState = "returned"
)

// Open reports whether a handoff in state s holds the thread for a person
// (requested or claimed): the bot stays quiet in it and a new handoff is
// not asked.
func (s HandoffState) Open() bool { return s == HandoffRequested || s == HandoffClaimed }

// Handoff is a thread handed from the bot to a person.
type Handoff struct {
	// ID is assigned by the store.
	ID int64 `json:"id"`
	// TurnID is the bot turn the handoff was asked from (0 if none).
	TurnID int64 `json:"turn_id,omitempty"`
	// Platform, Channel and Thread identify the conversation.
	Platform string `json:"platform"`
	Channel  string `json:"channel"`
	Thread   string `json:"thread"`
	// Question is the question that was handed off, as asked.
	Question string `json:"question"`
	// State is requested, claimed, resolved, failed or returned.
	State HandoffState `json:"state"`
	// RequestedBy, ClaimedBy and ResolvedBy are platform user IDs.
	RequestedBy string `json:"requested_by"`
	ClaimedBy   string `json:"claimed_by,omitempty"`
	ResolvedBy  string `json:"resolved_by,omitempty"`
	// RequestedAt, ClaimedAt and ResolvedAt are when each state began.
	RequestedAt time.Time `json:"requested_at"`
	ClaimedAt   time.Time `json:"claimed_at,omitempty"`
	ResolvedAt  time.Time `json:"resolved_at,omitempty"`
	// EscalationRef identifies the post in the escalation channel, so
	// that it can be updated when the state changes.
	EscalationRef string `json:"escalation_ref,omitempty"`
	// LastReplyBy and LastReply hold the latest reply a person (not the
	// asker) wrote in the thread while it was handed off.
	LastReplyBy string `json:"last_reply_by,omitempty"`
	LastReply   string `json:"last_reply,omitempty"`
	// AskedAgain is the asker's latest question to the bot while the
	// thread was handed off: answered if they bring the bot back.
	AskedAgain string `json:"asked_again,omitempty"`
}

// KnowledgeCandidate is a person's reply that resolved a handed-off
// thread: an answer the docs lacked, for an admin to turn into docs or a
// golden-set entry.
type KnowledgeCandidate struct {
	// ID is assigned by the store.
	ID int64 `json:"id"`
	// HandoffID and TurnID link the candidate to its handoff and turn.
	HandoffID int64 `json:"handoff_id"`
	TurnID    int64 `json:"turn_id,omitempty"`
	// Question is what was asked; Answer the person's reply; Author its
	// platform user ID.
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Author   string `json:"author"`
	// CreatedAt is when the handoff was resolved.
	CreatedAt time.Time `json:"created_at"`
}

// GoldenKind is what a golden question tests.
type GoldenKind string

// Kinds of golden questions.
const (
	// KindParaphrase asks in other words than the document uses.
	KindParaphrase GoldenKind = "paraphrase"
	// KindExact uses the document's own terms (names, codes, error messages).
	KindExact GoldenKind = "exact"
	// KindMulti asks several things at once, or needs more than one
	// document to answer.
	KindMulti GoldenKind = "multi"
	// KindCasual is chat style: typos, slang, abbreviations.
	KindCasual GoldenKind = "casual"
	// KindPasted pastes an error message or a log line.
	KindPasted GoldenKind = "pasted"
	// KindUnanswerable is not covered by the documents: docent should say
	// it does not know.
	KindUnanswerable GoldenKind = "unanswerable"
)

// GoldenKinds lists every known kind, in report order.
var GoldenKinds = []GoldenKind{KindParaphrase, KindExact, KindCasual, KindPasted, KindMulti, KindUnanswerable}

// Known reports whether k is one of GoldenKinds.
func (k GoldenKind) Known() bool { return slices.Contains(GoldenKinds, k) }

// GoldenQuestion is one question of a golden set with the documents that
// answer it: an entry of a golden YAML file (eval reads and scores them)
// and of the set the console edits (store keeps it).
type GoldenQuestion struct {
	// ID names the question; unique within the set.
	ID string `yaml:"id" json:"id"`
	// Question is the question text as a person would ask it.
	Question string `yaml:"question" json:"question"`
	// Kind is what the question tests.
	Kind GoldenKind `yaml:"kind" json:"kind"`
	// Expect lists the documents (and optionally sections) that answer
	// it; empty exactly when Kind is unanswerable.
	Expect []GoldenExpect `yaml:"expect,omitempty" json:"expect,omitempty"`
	// Facts are what a correct answer must state: each entry must appear
	// in the answer text (case-insensitive), one of its " | "-separated
	// alternatives sufficing. Optional; answerable questions only.
	Facts []string `yaml:"facts,omitempty" json:"facts,omitempty"`
	// Covered notes, for an unanswerable near-miss, what the documents do
	// cover; Uncovered names the part of a multi question they do not.
	Covered   string `yaml:"covered,omitempty" json:"covered,omitempty"`
	Uncovered string `yaml:"uncovered,omitempty" json:"uncovered,omitempty"`
	// Source says where the question came from, when that matters.
	Source string `yaml:"source,omitempty" json:"source,omitempty"`
	// Line is the question's line in the file it was loaded from, 0 when
	// it was not loaded from a file.
	Line int `yaml:"-" json:"line,omitempty"`

	// Position orders the console's set; new entries go last.
	Position int `yaml:"-" json:"-"`
	// FromTurn is the turn the console's entry was made from, 0 if none.
	FromTurn int64 `yaml:"-" json:"-"`
	// CreatedAt and UpdatedAt are set by the store.
	CreatedAt time.Time `yaml:"-" json:"-"`
	UpdatedAt time.Time `yaml:"-" json:"-"`
}

// GoldenExpect is a document, and optionally a section of it, that
// answers a golden question.
type GoldenExpect struct {
	// Doc is the document's path inside its source (Document.Path); it
	// matches a chunk whose DocID is "<source>:<Doc>" (or exactly Doc).
	Doc string `yaml:"doc" json:"doc"`
	// Section is a heading of the answering section; it matches a chunk
	// whose Section path contains it (case-insensitive). Optional.
	Section string `yaml:"section,omitempty" json:"section,omitempty"`
}

// Records the console keeps in the store: the golden set's runs, what the
// overview and the logs list, acknowledgements and API tokens.

// StaleAck is an admin's acknowledgement that a flagged document may stay
// as it is until a date.
type StaleAck struct {
	// DocID is the acknowledged document.
	DocID string
	// Until is when the acknowledgement lapses.
	Until time.Time
	// By and At say who acknowledged it and when; Note why.
	By   string
	At   time.Time
	Note string
}

// APIToken is a bearer token for the JSON API. Only a hash of the token is
// stored: the token itself is shown once, when it is made.
type APIToken struct {
	// ID is assigned by the store.
	ID int64
	// Name says who or what uses the token.
	Name string
	// Hash is the hex SHA-256 of the token.
	Hash string
	// Prefix is the token's first characters, to tell tokens apart.
	Prefix string
	// RatePerMinute bounds requests per minute; 0 means the configured default.
	RatePerMinute int
	// Scope limits the sources and labels the token may read; zero for all.
	Scope Scope
	// CreatedBy is the admin who made it.
	CreatedBy string
	// CreatedAt, LastUsedAt and RevokedAt are when it was made, last
	// accepted and revoked (zero when not).
	CreatedAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
}

// Revoked reports whether the token was revoked.
func (t APIToken) Revoked() bool { return !t.RevokedAt.IsZero() }

// TurnSummary is a turn as the console lists it: the question, outcome
// and citations, with its feedback, handoff and review state, without
// the trace.
type TurnSummary struct {
	// ID, Question, Platform, Channel and User identify the turn.
	ID       int64
	Question string
	Platform string
	Channel  string
	User     string
	// Status is the outcome; Error why a failed turn failed.
	Status Status
	Error  string
	// Citations are the sources the answer cited.
	Citations []Citation
	// LatencyMS is the total of the stage latencies.
	LatencyMS float64
	// CreatedAt is when the question arrived.
	CreatedAt time.Time
	// Helpful and NotHelpful count the ratings.
	Helpful, NotHelpful int
	// Handoff is the state of the latest handoff asked from the turn, "" if none.
	Handoff HandoffState
	// ReviewedAt, ReviewedBy and Assignee are the console's review state.
	ReviewedAt time.Time
	ReviewedBy string
	Assignee   string
	// Golden is the ID of the golden question made from the turn, "" if none.
	Golden string
	// Delivery says whether a chat turn's reply was posted.
	Delivery Delivery
}

// TurnStats are the overview's aggregates over a window of turns.
type TurnStats struct {
	// Total counts the turns; ByStatus by outcome.
	Total    int
	ByStatus map[Status]int
	// HandedOff counts turns a handoff was asked from.
	HandedOff int
	// Helpful and NotHelpful count the ratings given in the window.
	Helpful, NotHelpful int
	// MedianMS and P95MS are answer latency percentiles.
	MedianMS, P95MS float64
	// Daily counts questions per UTC day ("2006-01-02") and platform.
	Daily []DayCount
	// TopCited are the most cited documents, most first.
	TopCited []DocCount
}

// DayCount is how many questions a platform got on one day.
type DayCount struct {
	Day      string
	Platform string
	N        int
}

// DocCount is how often a document was cited.
type DocCount struct {
	DocID, Title, URL string
	N                 int
}

// GoldenRun is one run of the golden set.
type GoldenRun struct {
	// ID is assigned by the store.
	ID int64
	// Status is running, ok or failed (RunStatus values).
	Status string
	// StartedAt and FinishedAt bound the run (FinishedAt zero while running).
	StartedAt, FinishedAt time.Time
	// StartedBy is who started it.
	StartedBy string
	// Config is the configuration it ran under, secrets redacted.
	Config string
	// Questions is how many questions it asked.
	Questions int
	// Report is the run's summary as JSON (the eval package's report without its rows).
	Report json.RawMessage
	// Error is why the run failed, "" when it did not.
	Error string
	// Calibration is the passage model and decision rule fitted on the
	// run's questions (the eval package's fit as JSON), when the run
	// calibrated.
	Calibration json.RawMessage
}

// GoldenRunRow is one question's outcome in a run.
type GoldenRunRow struct {
	// Position orders the rows as the set was ordered.
	Position int
	// QuestionID, Question and Kind identify the question as it was asked.
	QuestionID, Question, Kind string
	// Status is the answer status; Pass whether the question passed;
	// FirstRank the document rank of the first expected document (0 when
	// none was retrieved).
	Status    string
	Pass      bool
	FirstRank int
	// Ranked are the document IDs that ranked first, best first.
	Ranked []string
	// Expect are the documents (and "doc › section") the question
	// expected when it ran.
	Expect []string
	// TurnID is the stored turn of the question's answer, with its whole
	// trace (platform eval), 0 when none was stored.
	TurnID int64
	// Row is the full outcome as JSON (the eval package's row).
	Row json.RawMessage
}

// JudgeRequest is an answer with the sources it cites, as a judge of
// answer quality (`docent eval --judge`) reads it.
type JudgeRequest struct {
	// Question is what was asked; Answer the answer text with [n] markers.
	Question, Answer string
	// Sources are the cited sources, numbered as in Answer.
	Sources []JudgeSource
}

// JudgeSource is one cited source.
type JudgeSource struct {
	// N is its marker number; Title its "Title › Section"; Text the chunk.
	N           int
	Title, Text string
}

// Judgment is a Judge's verdict on one answer.
type Judgment struct {
	// Claims counts the answer's claims; Supported those its cited source
	// supports; Unsupported quotes the others.
	Claims, Supported int
	Unsupported       []string
	// Relevance is how well the answer addresses the question, 0 to 1.
	Relevance float64
}

// Faithfulness is the share of claims supported (1 for no claims).
func (j Judgment) Faithfulness() float64 {
	if j.Claims == 0 {
		return 1
	}
	return float64(j.Supported) / float64(j.Claims)
}

// ForumResolution records how a forum post was solved: what closed the
// bot's part there, and who. A post has at most one.
type ForumResolution struct {
	Platform string
	// Forum is the forum channel's ID, ForumName its name when known;
	// Thread is the post.
	Forum, ForumName, Thread string
	// TurnID is the post's latest turn when the store knows it (0
	// otherwise).
	TurnID int64
	How    ResolutionHow
	// By is the user who marked it (the asker, staff, or the person who
	// resolved the handoff).
	By         string
	ResolvedAt time.Time
}

// ResolutionHow is the way a forum post was marked solved.
type ResolutionHow string

// Ways a forum post is marked solved.
const (
	ResolvedAskerReaction ResolutionHow = "asker_reaction"
	ResolvedAskerSaid     ResolutionHow = "asker_said_solved"
	ResolvedStaffReaction ResolutionHow = "staff_reaction"
	ResolvedStaffSaid     ResolutionHow = "staff_said_solved"
	ResolvedHandoff       ResolutionHow = "handoff_resolved"
)

// ForumStat is a forum's posts over a window: asked (posts with a turn),
// answered by the bot, handed off, and solved by each way.
type ForumStat struct {
	Platform, Forum, ForumName string
	Posts, Answered, HandedOff int
	Solved                     map[ResolutionHow]int
}

// SolvedTotal is the number of posts solved, every way.
func (s ForumStat) SolvedTotal() int {
	n := 0
	for _, v := range s.Solved {
		n += v
	}
	return n
}
