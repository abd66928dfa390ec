// Package connectorstest holds hand-written fakes and helpers for testing
// the sync engine and sources: an in-memory Source with full and
// incremental listings, deterministic embedders (plain and Trainable), a
// paragraph chunker, wrappers that inject failures or simulated crashes
// into an index or registry, and AssertConverged.
package connectorstest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/search"
)

// Source is an in-memory connectors.Source. Its cursor is a version
// number: with Incremental set, Changes(cursor) returns only what changed
// after that version; otherwise (and for cursor "") it lists everything.
type Source struct {
	name string

	mu          sync.Mutex
	docs        map[string]docent.Document
	changed     map[string]int // doc ID -> version of its last change or deletion
	version     int
	incremental bool
	err         error
	failed      []docent.DocError
	cursors     []string
}

var _ connectors.Source = (*Source)(nil)

// NewSource returns an empty source named name.
func NewSource(name string) *Source {
	return &Source{name: name, docs: map[string]docent.Document{}, changed: map[string]int{}}
}

// Name returns the source name.
func (s *Source) Name() string { return s.name }

// SetIncremental makes Changes with a non-empty cursor list only changes.
func (s *Source) SetIncremental(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.incremental = on
}

// SetErr makes Changes fail with err (nil to recover).
func (s *Source) SetErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// SetFailed makes Changes report these documents as failed.
func (s *Source) SetFailed(failed ...docent.DocError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = failed
}

// Put adds or replaces documents, filling in Source.
func (s *Source) Put(docs ...docent.Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	for _, d := range docs {
		d.Source = s.name
		s.docs[d.ID] = d
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
		s.changed[id] = s.version
	}
}

// Docs returns the current documents, by ID.
func (s *Source) Docs() []docent.Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]docent.Document, 0, len(s.docs))
	for _, d := range s.docs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b docent.Document) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Cursors returns the cursors Changes was called with, in order.
func (s *Source) Cursors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cursors)
}

// Changes lists the documents (all, or those changed since cursor).
func (s *Source) Changes(ctx context.Context, cursor string) (connectors.Changes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursors = append(s.cursors, cursor)
	if s.err != nil {
		return connectors.Changes{}, s.err
	}
	if err := ctx.Err(); err != nil {
		return connectors.Changes{}, err
	}
	ch := connectors.Changes{Cursor: strconv.Itoa(s.version), Failed: slices.Clone(s.failed)}
	since, err := strconv.Atoi(cursor)
	if cursor == "" || !s.incremental || err != nil {
		ch.Full = true
		since = -1
	}
	ids := make([]string, 0, len(s.changed))
	for id := range s.changed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if s.changed[id] <= since {
			continue
		}
		if d, ok := s.docs[id]; ok {
			ch.Docs = append(ch.Docs, d)
		} else if !ch.Full {
			ch.Deleted = append(ch.Deleted, id)
		}
	}
	return ch, nil
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
