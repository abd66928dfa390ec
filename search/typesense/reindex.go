package typesense

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Reindex rebuilds the index without downtime: it creates the next
// versioned collection for vectors of length dim, calls fill, which writes
// every chunk (with its vector) through write as many times as it likes,
// then moves the alias to the new collection in one call, records
// embedder as the vectors' embedder, and drops the previous collection.
// Until the move, queries see the previous collection whole; after it,
// the new one whole. If fill or a write fails, the new collection is
// dropped and the alias stays where it was. A refused chunk fails the
// reindex (a copy must be complete).
func (x *Index) Reindex(ctx context.Context, dim int, embedder string, fill func(write func([]docent.Chunk) error) error) error {
	if dim <= 0 {
		return fmt.Errorf("typesense: reindex: %w (dimension %d)", search.ErrDimension, dim)
	}
	old, err := x.current(ctx)
	if err != nil {
		return err
	}
	version := 1
	if old != nil {
		version = old.version + 1
	}
	name, err := x.createCollection(ctx, version, dim)
	if err != nil {
		return err
	}
	gen := newGen()
	written := 0
	headed := map[string]bool{}
	write := func(chunks []docent.Chunk) error {
		for _, c := range chunks {
			if c.ID == "" || c.DocID == "" {
				return fmt.Errorf("typesense: reindex: %w", search.ErrEmptyID)
			}
			if len(c.Vector) != dim {
				return fmt.Errorf("typesense: reindex %s: %w", c.ID, search.ErrDimension)
			}
		}
		failed, err := x.importChunks(ctx, name, chunks, gen, headed)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w: %w", ErrCopyFailed, &search.PartialError{Failed: failed})
		}
		written += len(chunks)
		return nil
	}
	if err := fill(write); err != nil {
		if _, derr := x.ts.Collection(name).Delete(context.WithoutCancel(ctx)); derr != nil {
			err = errors.Join(err, fmt.Errorf("typesense: drop unfinished %s: %w", name, derr))
		}
		return err
	}
	if err := x.swap(ctx, old, name, version, dim); err != nil {
		return err
	}
	if err := x.SetEmbedderName(ctx, embedder); err != nil {
		return err
	}
	x.log.Info("typesense: reindexed", slog.String("collection", name), slog.Int("chunks", written))
	return nil
}

// CopyResult says what CopyFrom did.
type CopyResult struct {
	// Chunks is how many chunks the source holds.
	Chunks int
	// Copied is how many were written (0 when the target already matched).
	Copied int
	// Collection is the collection behind the alias afterwards.
	Collection string
}

// copyBatch is how many chunks CopyFrom reads from the source at a time.
const copyBatch = 500

// CopyFrom makes the index hold exactly src's chunks, vectors and
// embedder name, without embedding anything: it reads src's chunks and
// stored vectors and, unless every chunk is already here with the same
// content hash (ContentHash) and the embedder name matches, rebuilds
// through Reindex. A second copy of an unchanged source writes nothing.
func (x *Index) CopyFrom(ctx context.Context, src search.Index) (CopyResult, error) {
	var ids []string
	if err := src.Scan(ctx, func(c docent.Chunk) error {
		ids = append(ids, c.ID)
		return nil
	}); err != nil {
		return CopyResult{}, fmt.Errorf("typesense: copy: read source: %w", err)
	}
	embedder, err := src.EmbedderName(ctx)
	if err != nil {
		return CopyResult{}, fmt.Errorf("typesense: copy: read source: %w", err)
	}
	res := CopyResult{Chunks: len(ids)}
	batches := func(fn func([]docent.Chunk) error) error {
		for start := 0; start < len(ids); start += copyBatch {
			part := ids[start:min(start+copyBatch, len(ids))]
			chunks, err := src.Chunks(ctx, part)
			if err != nil {
				return fmt.Errorf("typesense: copy: read source: %w", err)
			}
			vecs, err := src.Vectors(ctx, part)
			if err != nil {
				return fmt.Errorf("typesense: copy: read source: %w", err)
			}
			for i := range chunks {
				chunks[i].Vector = vecs[chunks[i].ID]
			}
			if err := fn(chunks); err != nil {
				return err
			}
		}
		return nil
	}

	// Compare with what the target holds.
	have := map[string]string{}
	if err := x.export(ctx, "", "chunk_id,content_hash", "", func(d chunkDoc) error {
		have[d.ChunkID] = d.ContentHash
		return nil
	}); err != nil {
		return res, err
	}
	same := len(have) == len(ids)
	dim := 0
	if err := batches(func(chunks []docent.Chunk) error {
		for _, c := range chunks {
			if dim == 0 {
				dim = len(c.Vector)
			}
			if same && have[c.ID] != ContentHash(c) {
				same = false
			}
		}
		return nil
	}); err != nil {
		return res, err
	}
	if same {
		name, err := x.EmbedderName(ctx)
		if err != nil {
			return res, err
		}
		same = name == embedder || len(ids) == 0
	}
	if same {
		if cur, _ := x.current(ctx); cur != nil {
			res.Collection = cur.collection
		}
		return res, nil
	}
	if len(ids) == 0 {
		return res, errors.New("typesense: copy: the source index is empty")
	}
	err = x.Reindex(ctx, dim, embedder, func(write func([]docent.Chunk) error) error {
		return batches(func(chunks []docent.Chunk) error {
			if err := write(chunks); err != nil {
				return err
			}
			res.Copied += len(chunks)
			return nil
		})
	})
	if err != nil {
		return res, err
	}
	cur, err := x.current(ctx)
	if err == nil && cur != nil {
		res.Collection = cur.collection
	}
	return res, err
}

// Drop deletes the alias, the collection behind it and the embedder
// record: everything this index stored. Tests against a real cluster
// clean up with it.
func (x *Index) Drop(ctx context.Context) error {
	cur, err := x.current(ctx)
	if err != nil {
		return err
	}
	var errs []error
	if cur != nil {
		if _, err := x.ts.Alias(x.opts.Alias).Delete(ctx); err != nil && statusOf(err) != http.StatusNotFound {
			errs = append(errs, err)
		}
		if _, err := x.ts.Collection(cur.collection).Delete(ctx); err != nil && statusOf(err) != http.StatusNotFound {
			errs = append(errs, err)
		}
	}
	if _, err := x.ts.Collection(x.metaCollection()).Delete(ctx); err != nil && statusOf(err) != http.StatusNotFound {
		errs = append(errs, err)
	}
	x.forget()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("typesense: drop: %w", err)
	}
	return nil
}
