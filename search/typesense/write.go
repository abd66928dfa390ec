package typesense

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/typesense/typesense-go/v2/typesense/api"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// deleteBatch is how many document keys one delete-by-filter carries
// (about 3.4 kB of filter_by in the URL).
const deleteBatch = 100

// Upsert replaces the chunks of every document named in chunks. Chunks are
// sent as JSONL imports with action=upsert, Options.BatchSize per request,
// each stamped with a generation tag; then, for each document whose
// chunks all landed, the chunks of an older generation are deleted by
// filter. A line the server refuses fails its document: Upsert then
// returns *search.PartialError naming it (and the chunk), leaves that
// document's older chunks in place, and the other documents are done.
//
// Vectors are checked before anything is sent: a missing vector or one of
// another length than the collection's is search.ErrDimension, unless the
// index is empty, when the collection is replaced by one of the new length.
func (x *Index) Upsert(ctx context.Context, chunks []docent.Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	for _, c := range chunks {
		if c.ID == "" || c.DocID == "" {
			return fmt.Errorf("typesense: upsert: %w", search.ErrEmptyID)
		}
	}
	dim := len(chunks[0].Vector)
	for _, c := range chunks {
		if len(c.Vector) == 0 || len(c.Vector) != dim {
			return fmt.Errorf("typesense: upsert %s: %w", c.ID, search.ErrDimension)
		}
	}
	cur, err := x.current(ctx)
	if err != nil {
		return err
	}
	if cur == nil || cur.dim != dim {
		if cur != nil {
			n, err := x.Count(ctx)
			if err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("typesense: upsert: vectors of length %d into an index of %d: %w", dim, cur.dim, search.ErrDimension)
			}
		}
		if cur, err = x.switchTo(ctx, dim); err != nil {
			return err
		}
	}
	gen := newGen()
	failed, err := x.importChunks(ctx, cur.collection, chunks, gen, nil)
	if err != nil {
		return err
	}
	var landed []string
	seen := map[string]bool{}
	for _, c := range chunks {
		if !seen[c.DocID] && failed[c.DocID] == nil {
			landed = append(landed, c.DocID)
		}
		seen[c.DocID] = true
	}
	for start := 0; start < len(landed); start += deleteBatch {
		part := landed[start:min(start+deleteBatch, len(landed))]
		filter := "doc_key:=[" + strings.Join(keys(part), ",") + "] && gen:!=" + gen
		if err := x.deleteWhere(ctx, cur.collection, filter); err != nil {
			return fmt.Errorf("typesense: upsert: remove replaced chunks: %w", err)
		}
	}
	if len(failed) > 0 {
		return &search.PartialError{Failed: failed}
	}
	return nil
}

// importChunks sends chunks to collection in JSONL batches and returns
// the documents with a refused line.
//
// headed, when not nil, spans several calls (a reindex writing one
// document's chunks in two batches): a document already in it gets no
// second head chunk, and the documents given one here are added.
func (x *Index) importChunks(ctx context.Context, collection string, chunks []docent.Chunk, gen string, headed map[string]bool) (map[string]error, error) {
	head := heads(chunks)
	if headed != nil {
		for doc := range head {
			if headed[doc] {
				delete(head, doc)
			}
			headed[doc] = true
		}
	}
	failed := map[string]error{}
	for start := 0; start < len(chunks); start += x.opts.BatchSize {
		part := chunks[start:min(start+x.opts.BatchSize, len(chunks))]
		var body bytes.Buffer
		enc := json.NewEncoder(&body)
		for _, c := range part {
			if err := enc.Encode(x.toDoc(c, head[c.DocID] == c.ID, gen)); err != nil {
				return nil, fmt.Errorf("typesense: upsert %s: %w", c.ID, err)
			}
		}
		action, size := "upsert", len(part)
		// typesense-go's ImportJsonl: the params must not be nil (it
		// writes defaults into them).
		rc, err := x.ts.Collection(collection).Documents().ImportJsonl(ctx, &body,
			&api.ImportDocumentsParams{Action: &action, BatchSize: &size})
		if err != nil {
			x.forgetOn404(err)
			return nil, fmt.Errorf("typesense: import into %s: %w", collection, err)
		}
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		i := 0
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var res struct {
				Success bool   `json:"success"`
				Error   string `json:"error"`
			}
			if err := json.Unmarshal(line, &res); err != nil {
				rc.Close()
				return nil, fmt.Errorf("typesense: import into %s: result line %d: %w", collection, i+1, err)
			}
			if i < len(part) && !res.Success {
				c := part[i]
				x.log.Warn("typesense: chunk refused", slog.String("chunk", c.ID), slog.String("doc", c.DocID), slog.String("error", res.Error))
				if failed[c.DocID] == nil {
					failed[c.DocID] = fmt.Errorf("typesense: chunk %s refused: %s", c.ID, res.Error)
				}
			}
			i++
		}
		err = sc.Err()
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("typesense: import into %s: read results: %w", collection, err)
		}
		if i != len(part) {
			return nil, fmt.Errorf("typesense: import into %s: %d result lines for %d documents", collection, i, len(part))
		}
	}
	return failed, nil
}

// deleteWhere deletes the documents filter matches.
func (x *Index) deleteWhere(ctx context.Context, collection, filter string) error {
	size := 500
	_, err := x.ts.Collection(collection).Documents().Delete(ctx, &api.DeleteDocumentsParams{FilterBy: &filter, BatchSize: &size})
	if err != nil {
		x.forgetOn404(err)
	}
	return err
}

func (x *Index) forgetOn404(err error) {
	if statusOf(err) == http.StatusNotFound {
		x.forget()
	}
}

// DeleteDocs removes every chunk of the given documents, by doc_key
// filter, deleteBatch documents per request.
func (x *Index) DeleteDocs(ctx context.Context, docIDs ...string) error {
	if len(docIDs) == 0 {
		return nil
	}
	cur, err := x.current(ctx)
	if err != nil || cur == nil {
		return err
	}
	for start := 0; start < len(docIDs); start += deleteBatch {
		part := docIDs[start:min(start+deleteBatch, len(docIDs))]
		if err := x.deleteWhere(ctx, x.opts.Alias, "doc_key:=["+strings.Join(keys(part), ",")+"]"); err != nil {
			return fmt.Errorf("typesense: delete documents: %w", err)
		}
	}
	return nil
}

// metaCollection holds one document per alias: the embedder name of the
// vectors behind it.
func (x *Index) metaCollection() string { return x.opts.Alias + "_meta" }

// EmbedderName returns the recorded embedder, "" when the index is empty.
func (x *Index) EmbedderName(ctx context.Context) (string, error) {
	n, err := x.Count(ctx)
	if err != nil || n == 0 {
		return "", err
	}
	doc, err := x.ts.Collection(x.metaCollection()).Document(x.opts.Alias).Retrieve(ctx)
	if statusOf(err) == http.StatusNotFound {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("typesense: embedder name: %w", err)
	}
	name, _ := doc["embedder"].(string)
	return name, nil
}

// SetEmbedderName records the embedder of the stored vectors.
func (x *Index) SetEmbedderName(ctx context.Context, name string) error {
	meta := x.metaCollection()
	_, err := x.ts.Collection(meta).Retrieve(ctx)
	if statusOf(err) == http.StatusNotFound {
		body, _ := json.Marshal(schemaSpec{Name: meta, Fields: []fieldSpec{{Name: "embedder", Type: "string"}}, TokenSeparators: []string{}})
		_, err = check(x.api.CreateCollectionWithBody(ctx, "application/json", bytes.NewReader(body)))
		if statusOf(err) == http.StatusConflict {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("typesense: embedder name: %w", err)
	}
	line, _ := json.Marshal(map[string]string{"id": x.opts.Alias, "embedder": name})
	action, size := "upsert", 1
	rc, err := x.ts.Collection(meta).Documents().ImportJsonl(ctx, bytes.NewReader(line),
		&api.ImportDocumentsParams{Action: &action, BatchSize: &size})
	if err != nil {
		return fmt.Errorf("typesense: embedder name: %w", err)
	}
	defer rc.Close()
	var res struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := json.NewDecoder(rc).Decode(&res); err != nil {
		return fmt.Errorf("typesense: embedder name: %w", err)
	}
	if !res.Success {
		return fmt.Errorf("typesense: embedder name: %s", res.Error)
	}
	return nil
}

// ErrCopyFailed wraps a refused line during Reindex.
var ErrCopyFailed = errors.New("typesense: reindex: chunks refused")
