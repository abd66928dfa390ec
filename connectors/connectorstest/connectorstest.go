// Package connectorstest holds hand-written fakes and helpers for testing
// the sync engine and sources: an in-memory Source with full, incremental
// and ID listings, Collect (a whole listing in memory), the Source contract
// suite every source runs (RunSourceSuite), deterministic embedders (plain
// and Trainable), a paragraph chunker, wrappers that inject failures or
// simulated crashes into an index or registry, and AssertConverged.
package connectorstest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/internal/backoff/backofftest"
	"github.com/docent-hq/docent/search"
)

// Source is an in-memory connectors.Source. Its cursor is a version
// number: with Incremental set, List(cursor) hands over only what changed
// after that version (with IDListing also set, it names every existing
// document with Present and finds deletions by absence, the way a wiki
// source does); otherwise, and for cursor "", it lists everything.
type Source struct {
	name string

	mu          sync.Mutex
	docs        map[string]docent.Document
	failing     map[string]error // documents that exist but cannot be read
	changed     map[string]int   // doc ID -> version of its last change or deletion
	version     int
	incremental bool
	idListing   bool
	err         error
	errAfter    int // with err: documents handed over before failing
	cursors     []string
}

var _ connectors.Source = (*Source)(nil)

// NewSource returns an empty source named name.
func NewSource(name string) *Source {
	return &Source{name: name, docs: map[string]docent.Document{}, failing: map[string]error{}, changed: map[string]int{}}
}

// Name returns the source name.
func (s *Source) Name() string { return s.name }

// SetIncremental makes List with a non-empty cursor list only changes.
func (s *Source) SetIncremental(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.incremental = on
}

// SetIDListing makes incremental listings name every existing document
// (Listing.Present) and report Complete, instead of naming deletions.
func (s *Source) SetIDListing(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idListing = on
}

// SetErr makes List fail with err (nil to recover) before it hands over
// anything.
func (s *Source) SetErr(err error) { s.SetErrAfter(0, err) }

// SetErrAfter makes List fail with err after handing over n documents
// (nil to recover): a source that breaks part way through a listing.
func (s *Source) SetErrAfter(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err, s.errAfter = err, n
}

// Fail makes the document id one that exists but cannot be read or
// converted: listings report it with Listing.Failed and err until Put
// replaces it. It counts as a change of the document.
func (s *Source) Fail(id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	s.failing[id] = err
	s.changed[id] = s.version
}

// Unreadable makes reading the document id fail with err, or succeed
// again when err is nil, without changing the document (a transient
// failure: a timeout). Only a listing that includes the document for
// another reason, such as one from an older cursor, reports it.
func (s *Source) Unreadable(id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.failing, id)
	} else {
		s.failing[id] = err
	}
}

// Put adds or replaces documents, filling in Source.
func (s *Source) Put(docs ...docent.Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	for _, d := range docs {
		d.Source = s.name
		s.docs[d.ID] = d
		delete(s.failing, d.ID)
		s.changed[d.ID] = s.version
	}
}

// Delete removes documents.
func (s *Source) Delete(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	for _, id := range ids {
		delete(s.docs, id)
		delete(s.failing, id)
		s.changed[id] = s.version
	}
}

// Docs returns the current readable documents, by ID.
func (s *Source) Docs() []docent.Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]docent.Document, 0, len(s.docs))
	for id, d := range s.docs {
		if s.failing[id] == nil {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b docent.Document) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Cursors returns the cursors List was called with, in order.
func (s *Source) Cursors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cursors)
}

// List hands over the documents (all, or those changed since cursor) in
// ID order.
func (s *Source) List(ctx context.Context, cursor string, l connectors.Listing) (connectors.Listed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursors = append(s.cursors, cursor)
	if s.err != nil && s.errAfter == 0 {
		return connectors.Listed{}, s.err
	}
	if err := ctx.Err(); err != nil {
		return connectors.Listed{}, err
	}
	out := connectors.Listed{Cursor: strconv.Itoa(s.version)}
	since, err := strconv.Atoi(cursor)
	if cursor == "" || !s.incremental || err != nil {
		out.Complete = true
		since = -1
	}
	ids := slices.Sorted(maps.Keys(s.changed))
	handed := 0
	var deleted []string
	for _, id := range ids {
		if s.changed[id] <= since {
			continue
		}
		d, exists := s.docs[id]
		failure, failing := s.failing[id]
		switch {
		case failing:
			err = l.Failed(ctx, id, failure)
		case exists:
			err = l.Document(ctx, d)
		default:
			deleted = append(deleted, id)
			continue
		}
		if err != nil {
			return connectors.Listed{}, fmt.Errorf("connectorstest: list: %w", err)
		}
		if handed++; s.err != nil && handed == s.errAfter {
			return connectors.Listed{}, s.err
		}
	}
	switch {
	case out.Complete:
	case s.idListing:
		var present []string
		for _, id := range ids {
			if _, ok := s.docs[id]; ok || s.failing[id] != nil {
				present = append(present, id)
			}
		}
		err = l.Present(ctx, present...)
		out.Complete = true
	case len(deleted) > 0:
		err = l.Deleted(ctx, deleted...)
	}
	if err != nil {
		return connectors.Listed{}, fmt.Errorf("connectorstest: list: %w", err)
	}
	return out, nil
}

// Collected is one whole listing, gathered in memory by Collect.
type Collected struct {
	// Docs are the documents handed over, in order.
	Docs []docent.Document
	// Failed are the documents reported as failed, with Retry set for a
	// transient failure (connectors.Transient).
	Failed []docent.DocError
	// Deleted and Present are the IDs named by Listing.Deleted and
	// Listing.Present, in order.
	Deleted, Present []string
	// Requests is what the listing cost a remote API, as the source
	// reported it (connectors.ReportRequests).
	Requests connectors.RequestStats
	// Fragments are the IDs the source left to the documents that include
	// them (connectors.ReportFragments), in order.
	Fragments []string
	// Listed is what List returned.
	connectors.Listed
}

// FailedIDs returns the IDs of the failed documents, in order.
func (c Collected) FailedIDs() []string {
	out := make([]string, len(c.Failed))
	for i, f := range c.Failed {
		out[i] = f.ID
	}
	return out
}

// Collect runs src.List from cursor and gathers what it hands over. It
// returns List's error.
func Collect(ctx context.Context, src connectors.Source, cursor string) (Collected, error) {
	var c collector
	listed, err := src.List(ctx, cursor, &c)
	c.out.Listed = listed
	return c.out, err
}

// collector is the Listing behind Collect.
type collector struct{ out Collected }

var (
	_ connectors.RequestReporter  = (*collector)(nil)
	_ connectors.FragmentReporter = (*collector)(nil)
)

func (c *collector) Requests(s connectors.RequestStats) { c.out.Requests = c.out.Requests.Add(s) }

func (c *collector) Fragments(ids ...string) { c.out.Fragments = append(c.out.Fragments, ids...) }

func (c *collector) Document(ctx context.Context, doc docent.Document) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.out.Docs = append(c.out.Docs, doc)
	return nil
}

func (c *collector) Failed(ctx context.Context, id string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	c.out.Failed = append(c.out.Failed, docent.DocError{ID: id, Err: err.Error(), Retry: connectors.Transient(err)})
	return nil
}

func (c *collector) Deleted(ctx context.Context, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.out.Deleted = append(c.out.Deleted, ids...)
	return nil
}

func (c *collector) Present(ctx context.Context, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.out.Present = append(c.out.Present, ids...)
	return nil
}

// Doc returns a document of source at path with the given body.
func Doc(source, path, body string) docent.Document {
	return docent.Document{
		ID: source + ":" + path, Source: source, Path: path,
		URL:   "https://docs.example.com/" + path,
		Title: strings.TrimSuffix(path, ".md"), Space: "handbook", Labels: []string{"test"},
		UpdatedAt: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC),
		Body:      body,
	}
}

// Chunker splits a document at blank lines, one chunk per paragraph, with
// the title prepended. Chunk IDs hash the document ID, position and text.
// A document whose body contains FailOn (when set) fails to chunk.
type Chunker struct {
	FailOn string
}

var _ connectors.Chunker = Chunker{}

// Chunk splits doc into paragraphs.
func (c Chunker) Chunk(doc docent.Document) ([]docent.Chunk, error) {
	if c.FailOn != "" && strings.Contains(doc.Body, c.FailOn) {
		return nil, errors.New("connectorstest: chunker refuses this document")
	}
	var out []docent.Chunk
	for _, para := range strings.Split(doc.Body, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		text := doc.Title + "\n" + para
		sum := sha256.Sum256([]byte(doc.ID + "\x00" + strconv.Itoa(len(out)) + "\x00" + text))
		out = append(out, docent.Chunk{
			ID: hex.EncodeToString(sum[:8]), DocID: doc.ID, Ord: len(out),
			Source: doc.Source, Space: doc.Space, Labels: doc.Labels, UpdatedAt: doc.UpdatedAt,
			Title: doc.Title, URL: doc.URL, Text: text,
		})
	}
	return out, nil
}

// Dim is the length of the fake embedders' vectors.
const Dim = 16

// Embedder is a deterministic search.Embedder: hashed bag of words,
// L2-normalized. A batch containing a text with FailOn (when set) fails.
type Embedder struct {
	FailOn string

	mu      sync.Mutex
	dim     int // 0 means Dim
	calls   int
	texts   int
	queries int
	model   string // mixed into the hashes; Trainable changes it
	before  func() // called at the start of EmbedDocuments (tests use it to cancel)
}

var _ search.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder whose vectors (and Name) depend on model:
// two models give incomparable vectors, like two real embedding models.
func NewEmbedder(model string) *Embedder { return &Embedder{model: model} }

// NewEmbedderDim is NewEmbedder with vectors of length dim.
func NewEmbedderDim(model string, dim int) *Embedder { return &Embedder{model: model, dim: dim} }

// Name identifies the embedder.
func (e *Embedder) Name() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "fake-hash-" + e.modelLocked()
}

func (e *Embedder) modelLocked() string {
	if e.model == "" {
		return "v0"
	}
	return e.model
}

// Dim returns the vector length: Dim unless set by NewEmbedderDim.
func (e *Embedder) Dim() int {
	if e.dim > 0 {
		return e.dim
	}
	return Dim
}

// OnEmbed sets a function called at the start of every EmbedDocuments call.
func (e *Embedder) OnEmbed(fn func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.before = fn
}

// Queries returns how many EmbedQuery calls the embedder has served.
func (e *Embedder) Queries() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.queries
}

// Calls returns how many EmbedDocuments calls and texts the embedder has served.
func (e *Embedder) Calls() (calls, texts int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls, e.texts
}

// EmbedQuery returns the query's vector, the same as its text's as a
// document, and counts the call.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	e.mu.Lock()
	e.queries++
	model := e.modelLocked()
	e.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return vectorOf(model, text, e.Dim()), nil
}

// EmbedDocuments returns one vector per text.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	before := e.before
	e.calls++
	e.texts += len(texts)
	model := e.modelLocked()
	e.mu.Unlock()
	if before != nil {
		before()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if e.FailOn != "" && strings.Contains(t, e.FailOn) {
			return nil, fmt.Errorf("connectorstest: embedder refuses text %d", i)
		}
		out[i] = vectorOf(model, t, e.Dim())
	}
	return out, nil
}

// vectorOf hashes the words of text into a unit vector under model.
func vectorOf(model, text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		sum := sha256.Sum256([]byte(model + "\x00" + w))
		i := binary.BigEndian.Uint32(sum[:4]) % uint32(dim)
		if sum[4]&1 == 0 {
			v[i]++
		} else {
			v[i]--
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// Trainable is a search.Trainable fake: Fit learns the corpus vocabulary
// and, when it differs from the last one, changes the model (and so Name
// and every vector).
type Trainable struct {
	Embedder

	fits  int
	vocab string
}

var _ search.Trainable = (*Trainable)(nil)

// Fit retrains when the corpus vocabulary changed and reports whether it did.
func (t *Trainable) Fit(ctx context.Context, corpus []string) (bool, error) {
	words := map[string]bool{}
	for _, c := range corpus {
		for _, w := range strings.Fields(strings.ToLower(c)) {
			words[w] = true
		}
	}
	list := make([]string, 0, len(words))
	for w := range words {
		list = append(list, w)
	}
	slices.Sort(list)
	sum := sha256.Sum256([]byte(strings.Join(list, " ")))
	vocab := hex.EncodeToString(sum[:4])
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fits++
	if vocab == t.vocab {
		return false, nil
	}
	t.vocab = vocab
	t.model = "trained-" + vocab
	return true, nil
}

// Fits returns how many times Fit was called.
func (t *Trainable) Fits() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fits
}

// Clock is the fake clock for sources and schedulers under test
// (backofftest.Clock): Sleep advances it at once and records the wait.
type Clock = backofftest.Clock

// NewClock returns a Clock set to start.
func NewClock(start time.Time) *Clock { return backofftest.NewClock(start) }

// WithinDeadline runs fn and returns its result, failing the test if fn
// has not returned within d (a conversion that hangs).
func WithinDeadline[T any](tb testing.TB, d time.Duration, fn func() T) T {
	tb.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		tb.Fatalf("did not return within %s", d)
		var zero T
		return zero
	}
}

// Words returns the words of s: maximal runs of letters and digits.
func Words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// AssertTextChunked chunks doc with the default search.Chunker and fails
// the test for every word of visible (a page's visible text) that appears
// neither in a chunk's text nor in the title: text lost between a
// source's page and the index. A run without spaces of half a chunk or
// more (a minified line) may be cut by the chunker, so only its start is
// checked whole.
func AssertTextChunked(tb testing.TB, visible string, doc docent.Document) {
	tb.Helper()
	chunks, err := search.Chunker{}.Chunk(doc)
	if err != nil {
		tb.Fatalf("chunk: %v", err)
	}
	var all strings.Builder
	all.WriteString(doc.Title) // indexed with every chunk (a body of only the title H1 gives none)
	all.WriteByte(0)
	for _, c := range chunks {
		all.WriteString(c.Text)
		all.WriteByte(0)
	}
	text := strings.ToLower(all.String()) // search ignores case
	var lost []string
	for _, tok := range strings.Fields(visible) {
		if search.EstimateTokens(tok) > search.DefaultTargetTokens/2 {
			tok = string([]rune(tok)[:search.DefaultTargetTokens])
		}
		for _, w := range Words(tok) {
			if !strings.Contains(text, strings.ToLower(w)) {
				lost = append(lost, w)
			}
		}
	}
	if len(lost) > 0 {
		tb.Errorf("%d words reach no chunk: %q\nmarkdown:\n%s", len(lost), lost, doc.Body)
	}
}

// ScanCounter is an index that counts its full scans (Index.Scan), for
// tests that show a path reads the index without scanning it.
type ScanCounter struct {
	search.Index
	scans atomic.Int32
}

// Scan counts the scan and runs it on the wrapped index.
func (c *ScanCounter) Scan(ctx context.Context, fn func(docent.Chunk) error) error {
	c.scans.Add(1)
	return c.Index.Scan(ctx, fn)
}

// Scans returns how many full scans have run.
func (c *ScanCounter) Scans() int32 { return c.scans.Load() }
