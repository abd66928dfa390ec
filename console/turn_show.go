package console

import (
	"net/http"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// showTurn renders one turn's full trace, its feedback and handoff, the
// "why not this document?" box (?docq= searches, ?doc= checks one) and
// the form that adds it to the golden set.
func (h *handler) showTurn(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		h.renderError(w, r, http.StatusNotFound, "No such turn.")
		return
	}
	ctx := r.Context()
	turn, err := h.store.Turn(ctx, id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	sum, err := h.store.TurnSummaryByID(ctx, id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	fb, err := h.store.TurnFeedback(ctx, id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	handoffs, err := h.store.ListHandoffs(ctx, store.HandoffFilter{TurnID: id})
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	knowledge, err := h.store.TurnKnowledgeCandidates(ctx, id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p := templates.TurnDetail{Meta: h.meta(r, "Turn "+templates.I64(id), "turns"), Turn: turn, Summary: sum, Feedback: fb,
		Handoffs: handoffs, Knowledge: knowledge, Flagged: h.flagged(ctx, turn.Answer.Citations)}
	if q := strings.TrimSpace(r.URL.Query().Get("docq")); q != "" {
		p.DocQuery = q
		if p.DocMatches, err = h.store.SearchDocuments(ctx, q, 20); err != nil {
			h.serverError(w, r, err)
			return
		}
	}
	if doc := r.URL.Query().Get("doc"); doc != "" {
		wn, err := h.whyNot(ctx, turn, doc)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		p.WhyNot = &wn
	}
	p.Golden = goldenFormFromTurn(turn)
	p.Golden.Meta = p.Meta
	h.render(w, r, templates.TurnDetailPage(p))
}

// goldenFormFromTurn proposes a golden entry for a turn: its question,
// and its candidate documents to pick the expected one from.
func goldenFormFromTurn(t docent.Turn) templates.GoldenForm {
	f := templates.GoldenForm{ID: slug(t.Question.Text), Question: t.Question.Text, Kind: "paraphrase", FromTurn: t.ID}
	if t.Answer.Status == docent.StatusNotFound && len(t.Answer.Citations) == 0 {
		f.Kind = "unanswerable"
	}
	f.Candidates = candidateDocs(t.Answer.Citations, t.Answer.Trace.Candidates)
	return f
}

// candidateDocs lists the distinct documents the answer cited, in
// citation order, then the other candidates', best first, each with the
// section of its cited or best chunk.
func candidateDocs(cites []docent.Citation, hits []docent.Hit) []templates.DocChoice {
	seen := map[string]bool{}
	var out []templates.DocChoice
	byChunk := map[string]docent.Hit{}
	for _, h := range hits {
		byChunk[h.Chunk.ID] = h
	}
	var ordered []docent.Hit
	for _, c := range cites {
		h, ok := byChunk[c.ChunkID]
		if !ok {
			h = docent.Hit{Chunk: docent.Chunk{ID: c.ChunkID, DocID: c.DocID, Title: c.Title}}
			if c.Section != "" {
				h.Chunk.Section = strings.Split(c.Section, " › ")
			}
		}
		ordered = append(ordered, h)
	}
	for _, h := range append(ordered, hits...) {
		if seen[h.Chunk.DocID] {
			continue
		}
		seen[h.Chunk.DocID] = true
		section := ""
		if n := len(h.Chunk.Section); n > 0 {
			section = h.Chunk.Section[n-1]
		}
		out = append(out, templates.DocChoice{Path: docPath(h.Chunk.DocID), Title: h.Chunk.Title, Section: section, Rank: len(out) + 1})
		if len(out) == 10 {
			break
		}
	}
	return out
}

// docPath is the path part of a document ID ("<source>:<path>"), the
// form golden sets name documents by.
func docPath(id string) string {
	if _, p, ok := strings.Cut(id, ":"); ok {
		return p
	}
	return id
}

// slug makes a golden question ID from its text.
func slug(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}
