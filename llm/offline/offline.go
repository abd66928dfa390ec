// Package offline is an embedder that needs no network and no downloaded
// weights. It learns word vectors from the indexed corpus itself: a PPMI
// word-context matrix (window 5, context distribution smoothing 0.75) over
// the corpus vocabulary, with a term-by-chunk tf-idf block beside it (an
// LSA-style view, scaled to twice the PPMI block's norm), reduced together
// by a randomized truncated SVD to Dim dimensions. A text is embedded as
// the IDF-weighted mean of its words' vectors with the corpus's first
// principal component removed. Before any Fit it embeds hashed words and
// character n-grams, a lexical fallback under a different Name.
//
// Training is deterministic: the same corpus gives the same model bytes
// and so the same Name. The model persists to Options.ModelPath, so a
// restart loads it and re-embeds nothing.
package offline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/docent-hq/docent/search"
)

var _ search.Trainable = (*Embedder)(nil)

// Defaults for Options fields left zero.
const (
	DefaultDim      = 256
	DefaultWindow   = 5
	DefaultMinCount = 2
	DefaultMaxVocab = 50000
)

// Drift thresholds of the Fit change rule: Fit retrains when the document
// count moved by more than MaxDocDrift (relative to the trained corpus) or
// the unigram distribution moved by more than MaxMassDrift (total
// variation distance over the model's vocabulary, the rest pooled).
const (
	MaxDocDrift  = 0.25
	MaxMassDrift = 0.20
)

// minVocab is the smallest vocabulary worth a model; below it Fit keeps
// the hashed fallback.
const minVocab = 16

// Options configures an Embedder. Zero fields take the defaults.
type Options struct {
	// Dim is the vector length (default 256).
	Dim int
	// ModelPath is where Fit persists the trained model and where
	// NewEmbedder loads it from; "" keeps the model in memory only.
	ModelPath string
	// Window is the co-occurrence window in terms on each side (default 5).
	Window int
	// MinCount is how often a term must occur to get a vector (default 2).
	MinCount int
	// MaxVocab caps the vocabulary, most frequent terms first (default 50000).
	MaxVocab int
	// Logger receives load and training events; nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Dim <= 0 {
		o.Dim = DefaultDim
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.MinCount <= 0 {
		o.MinCount = DefaultMinCount
	}
	if o.MaxVocab <= 0 {
		o.MaxVocab = DefaultMaxVocab
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Embedder is the offline, corpus-trained embedder. It is safe for
// concurrent use; Embed runs against whichever model is current.
type Embedder struct {
	opts Options
	log  *slog.Logger
	pr   params

	fitMu sync.Mutex // serializes Fit
	mu    sync.RWMutex
	m     *model // nil until trained or loaded

	seen fileStamp // the model file Reload last read (guarded by fitMu)
}

// fileStamp tells whether a file changed since it was last read.
type fileStamp struct {
	size int64
	mod  time.Time
}

// NewEmbedder returns an embedder with the model stored at
// opts.ModelPath, if there is a readable one of the right dimension, and
// the untrained hashed fallback otherwise (an unreadable model is logged
// and replaced on the next Fit).
func NewEmbedder(opts Options) *Embedder {
	opts = opts.withDefaults()
	e := &Embedder{opts: opts, log: opts.Logger, pr: defaultParams}
	if m := e.read(); m != nil {
		e.m = m
		e.log.Info("offline: loaded model", slog.String("name", m.name), slog.Int("vocab", len(m.terms)))
	}
	return e
}

// read returns the model stored at ModelPath, or nil when there is none
// usable (logged unless the file is simply absent).
func (e *Embedder) read() *model {
	if e.opts.ModelPath == "" {
		return nil
	}
	b, err := os.ReadFile(e.opts.ModelPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		e.log.Warn("offline: read model", slog.String("path", e.opts.ModelPath), slog.Any("error", err))
		return nil
	}
	m, err := decodeModel(b)
	if err != nil {
		e.log.Warn("offline: decode model", slog.String("path", e.opts.ModelPath), slog.Any("error", err))
		return nil
	}
	if m.dim != e.opts.Dim {
		e.log.Warn("offline: model has another dimension", slog.Int("model", m.dim), slog.Int("want", e.opts.Dim))
		return nil
	}
	return m
}

// Reload reads the model at ModelPath again and uses it when it differs
// from the current one, reporting whether the model, and so Name,
// changed. A process that reads an index another process syncs calls it
// when the index changed: a sync that retrains writes the new model
// (atomically) before it re-embeds any chunk. A missing or unreadable
// file keeps the current model.
func (e *Embedder) Reload() bool {
	e.fitMu.Lock()
	defer e.fitMu.Unlock()
	if e.opts.ModelPath == "" {
		return false
	}
	fi, err := os.Stat(e.opts.ModelPath)
	if err != nil {
		return false
	}
	stamp := fileStamp{size: fi.Size(), mod: fi.ModTime()}
	if stamp.size == e.seen.size && stamp.mod.Equal(e.seen.mod) {
		return false // the file Reload read last, unchanged: skip reading it
	}
	e.seen = stamp
	m := e.read()
	if m == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m != nil && e.m.name == m.name {
		return false
	}
	e.m = m
	e.log.Info("offline: reloaded model", slog.String("name", m.name), slog.Int("vocab", len(m.terms)))
	return true
}

// Name identifies the current model: "offline-ppmi-svd-<dim>@<hash>"
// once trained, with a short hash of the model bytes, and
// "offline-hash-<dim>-v1" for the untrained fallback.
func (e *Embedder) Name() string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.m == nil {
		return fmt.Sprintf("offline-hash-%d-v1", e.opts.Dim)
	}
	return e.m.name
}

// Dim is the vector length.
func (e *Embedder) Dim() int { return e.opts.Dim }

// Trained reports whether a corpus-trained model is in use.
func (e *Embedder) Trained() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.m != nil
}

// EmbedQuery embeds a search query exactly as EmbedDocuments embeds a
// text: the offline model has one space for both.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// EmbedDocuments returns one L2-normalized vector per text, in order. A
// text with no term the model knows (for example an empty one) gets the
// zero vector, which is similar to nothing. Texts are embedded on
// GOMAXPROCS goroutines.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.RLock()
	m := e.m
	e.mu.RUnlock()
	out := make([][]float32, len(texts))
	inBlocks(len(texts), 16, func() func(lo, hi int) {
		return func(lo, hi int) {
			if ctx.Err() != nil {
				return
			}
			for i := lo; i < hi; i++ {
				if m == nil {
					out[i] = hashEmbed(texts[i], e.opts.Dim)
				} else {
					out[i] = m.embed(search.Analyze(texts[i]))
				}
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline: embed: %w", err)
	}
	return out, nil
}

// Fit trains a model on corpus when there is none yet or the corpus has
// drifted past MaxDocDrift or MaxMassDrift from the one the model learned,
// persists it to ModelPath (atomically: temporary file, then rename), and
// reports whether the model, and so Name, changed. A corpus too small to
// train on (fewer than 16 terms occurring MinCount times) keeps the
// current model.
func (e *Embedder) Fit(ctx context.Context, corpus []string) (bool, error) {
	e.fitMu.Lock()
	defer e.fitMu.Unlock()
	st := collect(corpus)
	e.mu.RLock()
	cur := e.m
	e.mu.RUnlock()
	if cur != nil {
		docDrift, massDrift := cur.drift(st)
		if docDrift <= MaxDocDrift && massDrift <= MaxMassDrift {
			return false, nil
		}
		e.log.Info("offline: corpus drifted, retraining",
			slog.Float64("doc_drift", docDrift), slog.Float64("mass_drift", massDrift))
	}
	m, err := train(ctx, st, e.opts, e.pr)
	// Training left its matrices (several times the model's size) as
	// garbage: hand their pages back to the system now, so that the
	// process's resident memory falls back once a fit is through instead
	// of holding the training peak while it serves.
	debug.FreeOSMemory()
	if err != nil {
		return false, err
	}
	if m == nil {
		return false, nil
	}
	raw := m.finish(nil)
	if cur != nil && cur.name == m.name {
		return false, nil
	}
	if e.opts.ModelPath != "" {
		if err := writeAtomic(e.opts.ModelPath, raw); err != nil {
			return false, err
		}
	}
	e.mu.Lock()
	e.m = m
	e.mu.Unlock()
	e.log.Info("offline: trained model", slog.String("name", m.name), slog.Int("vocab", len(m.terms)), slog.Int("docs", st.docs))
	return true, nil
}
