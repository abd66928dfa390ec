package connectors

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// plainNeedsReembed reports whether a non-trainable embedder must re-embed
// the index: it holds vectors made by another embedder, or a re-embedding
// did not finish.
func (e *Engine) plainNeedsReembed(ctx context.Context) (bool, error) {
	name, err := e.idx.EmbedderName(ctx)
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	if name == e.emb.Name() {
		return false, nil
	}
	n, err := e.idx.Count(ctx)
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	return n > 0, nil
}

// prepareModel makes sure the embedder is ready for this run's chunks and
// reports whether every vector in the index must be remade. A Trainable
// embedder is fitted to the corpus the index will hold after the run
// (ready's new chunks, and the stored chunks of every other document not
// gone); a plain embedder names an empty index.
func (r *run) prepareModel(ctx context.Context, ready []*pendingDoc, gone map[string]bool) (bool, error) {
	e := r.e
	tr, ok := e.emb.(search.Trainable)
	if !ok {
		reembed, err := e.plainNeedsReembed(ctx)
		if err != nil || reembed {
			return reembed, err
		}
		name, err := e.idx.EmbedderName(ctx)
		if err != nil {
			return false, fmt.Errorf("index: %w", err)
		}
		if name == "" { // empty index: its vectors will be this embedder's
			if err := e.idx.SetEmbedderName(ctx, e.emb.Name()); err != nil {
				return false, fmt.Errorf("index: %w", err)
			}
		}
		return false, nil
	}

	name, err := e.idx.EmbedderName(ctx)
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	if len(ready) == 0 && len(gone) == 0 && name == tr.Name() {
		// The corpus is the one the model was fitted to after the last
		// run that changed it: nothing to learn.
		return false, nil
	}
	type piece struct {
		doc  string
		ord  int
		text string
	}
	var pieces []piece
	replaced := make(map[string]bool, len(ready))
	for _, p := range ready {
		replaced[p.doc.ID] = true
		for _, c := range p.chunks {
			pieces = append(pieces, piece{c.DocID, c.Ord, c.Text})
		}
	}
	err = e.idx.Scan(ctx, func(c docent.Chunk) error {
		if !replaced[c.DocID] && !gone[c.DocID] {
			pieces = append(pieces, piece{c.DocID, c.Ord, c.Text})
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	// A canonical order, so the same corpus always fits the same model.
	slices.SortStableFunc(pieces, func(a, b piece) int {
		return cmp.Or(cmp.Compare(a.doc, b.doc), cmp.Compare(a.ord, b.ord))
	})
	corpus := make([]string, len(pieces))
	for i, p := range pieces {
		corpus[i] = p.text
	}
	changed, err := tr.Fit(ctx, corpus)
	if err != nil {
		return false, fmt.Errorf("fit embedder: %w", err)
	}
	return changed || name != tr.Name(), nil
}

// batches groups documents so that each group's chunks fill about one
// embedding call; a document larger than size is a group of its own.
func batches(docs []*pendingDoc, size int) [][]*pendingDoc {
	var out [][]*pendingDoc
	var cur []*pendingDoc
	n := 0
	for _, p := range docs {
		if len(cur) > 0 && n+len(p.chunks) > size {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, p)
		n += len(p.chunks)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// embedGroup fills in the vectors of the group's chunks. When a batched
// call fails it retries document by document, so one bad document does not
// fail the others: errs[i] is document i's error. The returned error is
// the context's, when it was cancelled.
func (e *Engine) embedGroup(ctx context.Context, group []*pendingDoc) (errs []error, err error) {
	errs = make([]error, len(group))
	var chunks []*docent.Chunk
	for _, p := range group {
		for i := range p.chunks {
			chunks = append(chunks, &p.chunks[i])
		}
	}
	if err := e.embedChunks(ctx, chunks); err == nil {
		return errs, nil
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	} else if len(group) == 1 {
		errs[0] = err
		return errs, nil
	}
	for i, p := range group {
		one := make([]*docent.Chunk, len(p.chunks))
		for j := range p.chunks {
			one[j] = &p.chunks[j]
		}
		errs[i] = e.embedChunks(ctx, one)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return errs, nil
}

// embedChunks sets the Vector of every chunk, BatchSize texts per call.
func (e *Engine) embedChunks(ctx context.Context, chunks []*docent.Chunk) error {
	for start := 0; start < len(chunks); start += e.opts.BatchSize {
		part := chunks[start:min(start+e.opts.BatchSize, len(chunks))]
		texts := make([]string, len(part))
		for i, c := range part {
			texts[i] = c.Text
		}
		vecs, err := e.emb.EmbedDocuments(ctx, texts)
		if err != nil {
			return err
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		for i, v := range vecs {
			if len(v) != e.emb.Dim() {
				return fmt.Errorf("embedder returned a %d-dimensional vector, want %d", len(v), e.emb.Dim())
			}
			part[i].Vector = v
		}
	}
	return nil
}

// reembedAll remakes the vector of every chunk in the index except those of
// the documents in skip (which this run rewrites or deletes). Any failure
// fails the run: the index keeps an empty embedder name, so the next run
// starts the re-embedding over.
//
// When the index refuses the first remade document (the new vectors have
// another length than the stored ones), it empties the index and writes
// the remade chunks into it: the documents in skip are then missing from
// the index until this run or, if it stops early, a later one re-indexes
// them (the registry still lists their chunks).
func (e *Engine) reembedAll(ctx context.Context, skip map[string]bool) error {
	var docs []*pendingDoc
	all := map[string]bool{}
	err := e.idx.Scan(ctx, func(c docent.Chunk) error {
		all[c.DocID] = true
		if skip[c.DocID] {
			return nil
		}
		if len(docs) == 0 || docs[len(docs)-1].doc.ID != c.DocID {
			docs = append(docs, &pendingDoc{doc: docent.Document{ID: c.DocID}})
		}
		last := docs[len(docs)-1]
		last.chunks = append(last.chunks, c)
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	e.log.Info("re-embedding the index", slog.String("embedder", e.emb.Name()), slog.Int("documents", len(docs)))
	upserted := 0
	for _, group := range batches(docs, e.opts.BatchSize) {
		if err := ctx.Err(); err != nil {
			return err
		}
		errs, err := e.embedGroup(ctx, group)
		if err != nil {
			return err
		}
		for i, p := range group {
			if errs[i] != nil {
				return fmt.Errorf("re-embed %s: %w", p.doc.ID, errs[i])
			}
			err := e.idx.Upsert(ctx, p.chunks)
			if err != nil && upserted == 0 {
				e.log.Warn("index refused re-embedded vectors; rebuilding it",
					slog.String("embedder", e.emb.Name()), slog.Any("error", err))
				ids := slices.Sorted(maps.Keys(all))
				if err := e.idx.DeleteDocs(ctx, ids...); err != nil {
					return fmt.Errorf("index: %w", err)
				}
				err = e.idx.Upsert(ctx, p.chunks)
			}
			if err != nil {
				return fmt.Errorf("index: %w", err)
			}
			upserted++
		}
	}
	return nil
}
