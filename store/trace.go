package store

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/docent-hq/docent"
)

// A trace is mostly its candidate chunks (text, title, section, URL,
// labels), and the same chunks come back for question after question. So
// a stored trace refers to each candidate's chunk by a hash into
// trace_chunks, where each distinct chunk is stored once, and the rest of
// the trace (scores, ranks, stages) is deflated JSON: about 1.6 KB a turn
// instead of 24 KB.

// storedTrace is the JSON inside trace_z.
type storedTrace struct {
	// Trace is the trace with every candidate's Chunk emptied.
	Trace docent.Trace `json:"trace"`
	// Chunks[i] is the trace_chunks hash of candidate i's chunk.
	Chunks []string `json:"chunks,omitempty"`
}

// maxTraceBytes bounds what one stored trace may inflate to.
const maxTraceBytes = 64 << 20

// traceChunk is a candidate chunk to store in trace_chunks, as JSON.
type traceChunk struct {
	hash  string
	chunk []byte
}

// encodeTrace splits tr into its compressed form and the chunks it
// refers to.
func encodeTrace(tr docent.Trace) ([]byte, []traceChunk, error) {
	st := storedTrace{Trace: tr}
	if tr.Candidates != nil {
		st.Trace.Candidates = make([]docent.Hit, len(tr.Candidates))
	}
	var chunks []traceChunk
	seen := map[string]bool{}
	for i, h := range tr.Candidates {
		raw, err := json.Marshal(h.Chunk)
		if err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(raw)
		hash := hex.EncodeToString(sum[:12])
		st.Chunks = append(st.Chunks, hash)
		h.Chunk = docent.Chunk{}
		st.Trace.Candidates[i] = h
		if !seen[hash] {
			seen[hash] = true
			chunks = append(chunks, traceChunk{hash: hash, chunk: raw})
		}
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, nil, err
	}
	z, err := deflate(raw)
	return z, chunks, err
}

// decodeTrace inflates a trace_z value; the candidates' chunks are filled
// in later from trace_chunks (fillChunks).
func decodeTrace(z []byte) (storedTrace, error) {
	var st storedTrace
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), maxTraceBytes+1))
	if err != nil {
		return st, fmt.Errorf("inflate trace: %w", err)
	}
	if len(raw) > maxTraceBytes {
		return st, fmt.Errorf("inflate trace: over %d bytes", maxTraceBytes)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("decode trace: %w", err)
	}
	return st, nil
}

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression) // the level is valid
	return w
}}

func deflate(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// putChunks stores chunks, or marks them used by a turn created at created.
func putChunks(ctx context.Context, tx *sql.Tx, chunks []traceChunk, created any) error {
	for _, c := range chunks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO trace_chunks (hash, chunk, last_used) VALUES (?, ?, ?)
			ON CONFLICT (hash) DO UPDATE SET last_used = excluded.last_used
			WHERE excluded.last_used > trace_chunks.last_used`, c.hash, string(c.chunk), created); err != nil {
			return fmt.Errorf("trace chunk: %w", err)
		}
	}
	return nil
}

// fillChunks puts the stored chunks back into the candidates of turns
// whose traces were read from trace_z (pending maps each such turn's
// index in turns to its chunk hashes).
func (db *DB) fillChunks(ctx context.Context, turns []docent.Turn, pending map[int][]string) error {
	if len(pending) == 0 {
		return nil
	}
	var hashes []string
	for _, hs := range pending {
		hashes = append(hashes, hs...)
	}
	list, err := json.Marshal(hashes)
	if err != nil {
		return err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT hash, chunk FROM trace_chunks
		WHERE hash IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return fmt.Errorf("trace chunks: %w", err)
	}
	defer rows.Close()
	chunks := make(map[string]docent.Chunk, len(hashes))
	for rows.Next() {
		var h, raw string
		if err := rows.Scan(&h, &raw); err != nil {
			return fmt.Errorf("trace chunks: %w", err)
		}
		var c docent.Chunk
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return fmt.Errorf("trace chunk %s: %w", h, err)
		}
		chunks[h] = c
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("trace chunks: %w", err)
	}
	for i, hs := range pending {
		cands := turns[i].Answer.Trace.Candidates
		for j, h := range hs {
			if j < len(cands) {
				cands[j].Chunk = chunks[h]
			}
		}
	}
	return nil
}
