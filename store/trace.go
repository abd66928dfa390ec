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

// A trace is mostly the text of its candidate chunks, and the same chunks
// come back for question after question. So a stored trace keeps each
// candidate's text as a hash into trace_texts, where each distinct text is
// stored once, and the rest of the trace is deflated JSON.

// storedTrace is the JSON inside trace_z.
type storedTrace struct {
	// Trace is the trace with every candidate's Chunk.Text emptied.
	Trace docent.Trace `json:"trace"`
	// Texts[i] is the trace_texts hash of candidate i's text ("" for none).
	Texts []string `json:"texts,omitempty"`
}

// maxTraceBytes bounds what one stored trace may inflate to.
const maxTraceBytes = 64 << 20

// traceText is a candidate text to store in trace_texts.
type traceText struct{ hash, text string }

// encodeTrace splits tr into its compressed form and the texts it refers to.
func encodeTrace(tr docent.Trace) ([]byte, []traceText, error) {
	st := storedTrace{Trace: tr}
	st.Trace.Candidates = make([]docent.Hit, len(tr.Candidates))
	var texts []traceText
	seen := map[string]bool{}
	for i, h := range tr.Candidates {
		st.Trace.Candidates[i] = h
		if h.Chunk.Text == "" {
			st.Texts = append(st.Texts, "")
			continue
		}
		sum := sha256.Sum256([]byte(h.Chunk.Text))
		hash := hex.EncodeToString(sum[:16])
		st.Texts = append(st.Texts, hash)
		st.Trace.Candidates[i].Chunk.Text = ""
		if !seen[hash] {
			seen[hash] = true
			texts = append(texts, traceText{hash: hash, text: h.Chunk.Text})
		}
	}
	if tr.Candidates == nil {
		st.Trace.Candidates = nil
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, nil, err
	}
	z, err := deflate(raw)
	return z, texts, err
}

// decodeTrace inflates a trace_z value; the candidates' texts are filled
// in later from trace_texts (fillTexts).
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

// putTexts stores texts, or marks them used by a turn created at created.
func putTexts(ctx context.Context, tx *sql.Tx, texts []traceText, created any) error {
	for _, t := range texts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO trace_texts (hash, text, last_used) VALUES (?, ?, ?)
			ON CONFLICT (hash) DO UPDATE SET last_used = excluded.last_used
			WHERE excluded.last_used > trace_texts.last_used`, t.hash, t.text, created); err != nil {
			return fmt.Errorf("trace text: %w", err)
		}
	}
	return nil
}

// fillTexts puts the stored texts back into the candidates of turns whose
// traces were read from trace_z (pending maps each such turn's index in
// turns to its text hashes).
func (db *DB) fillTexts(ctx context.Context, turns []docent.Turn, pending map[int][]string) error {
	if len(pending) == 0 {
		return nil
	}
	var hashes []string
	for _, hs := range pending {
		for _, h := range hs {
			if h != "" {
				hashes = append(hashes, h)
			}
		}
	}
	list, err := json.Marshal(hashes)
	if err != nil {
		return err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT hash, text FROM trace_texts
		WHERE hash IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return fmt.Errorf("trace texts: %w", err)
	}
	defer rows.Close()
	texts := make(map[string]string, len(hashes))
	for rows.Next() {
		var h, t string
		if err := rows.Scan(&h, &t); err != nil {
			return fmt.Errorf("trace texts: %w", err)
		}
		texts[h] = t
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("trace texts: %w", err)
	}
	for i, hs := range pending {
		cands := turns[i].Answer.Trace.Candidates
		for j, h := range hs {
			if j < len(cands) && h != "" {
				cands[j].Chunk.Text = texts[h]
			}
		}
	}
	return nil
}
