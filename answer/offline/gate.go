package offline

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/search"
)

// GateOptions tune the offline Gate. Zero values take the defaults.
type GateOptions struct {
	// MaxSources is how many sources (one chunk per further page) the
	// generator sees; default 4. A conflicting near-duplicate may add one.
	MaxSources int
	// Corpus gives the corpus statistics: IDF for every term, and which
	// terms the docs hold at all. Without it IDF is estimated over the
	// candidates.
	Corpus *CorpusStats
	// Passage ranks passages; the zero value takes DefaultPassage.
	Passage PassageModel
	// Embedder, when set, embeds the question and the passages of the
	// first candidates for the passage feature sim. Set it only to an
	// embedder that costs nothing per call (the offline one): it embeds
	// a few hundred passages per question.
	Embedder Embedder
}

// Embedder embeds texts; llm/offline's embedder implements it.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
}

// Gate is the offline answer.Gate. It analyses the question once (its
// content terms weighted by corpus IDF, the kind of answer it asks for,
// the names and codes it holds), finds the closest page among the first
// candidates and the passage (sentence, list item, table row) on it that
// best answers the question, and measures the answer.Features of that
// passage. It never decides: the answerer's Rule does. Multi-part
// questions are measured part by part.
type Gate struct {
	opts GateOptions
	log  *slog.Logger

	mu      sync.RWMutex // guards passage and observe
	passage PassageModel
	observe func([]PassageObservation)
}

// Observe makes the gate hand every question's scored passages to fn
// (nil stops it): a calibration run labels them and fits a passage model.
func (g *Gate) Observe(fn func([]PassageObservation)) {
	g.mu.Lock()
	g.observe = fn
	g.mu.Unlock()
}

var _ answer.Gate = (*Gate)(nil)

// NewGate returns the gate; log nil discards its debug logs.
func NewGate(opts GateOptions, log *slog.Logger) *Gate {
	if opts.MaxSources <= 0 {
		opts.MaxSources = 4
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	passage := opts.Passage
	if passage.Weights == nil {
		passage = DefaultPassage
	}
	return &Gate{opts: opts, log: log, passage: passage}
}

// SetPassage replaces the passage model for questions asked from now on
// (a calibration run fits one and measures with it).
func (g *Gate) SetPassage(m PassageModel) {
	g.mu.Lock()
	g.passage = m
	g.mu.Unlock()
}

// Passage returns the passage model in force.
func (g *Gate) Passage() PassageModel {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.passage
}

// Gate parameters.
const (
	// passageDepth is how many first candidates the passages are read
	// from.
	passageDepth = 12
	// chunksPerPage is how many chunks of the closest page may be
	// sources.
	chunksPerPage = 3
	// sourceShare is the smallest best-passage coverage, relative to the
	// closest page's, of a further source.
	sourceShare = 0.6
	// maxCovered is the most names Evidence.Covered lists.
	maxCovered = 8
	// agreementTop is how many first candidates Features.Agreement
	// counts.
	agreementTop = 5
	// lengthScale is the number of content terms at which
	// Features.Length reaches 1.
	lengthScale = 30.0
)

// basis is the gate's analysis, handed to the Extractive generator as
// answer.Evidence.Basis: the question, the passage measured and every
// passage's probability.
type basis struct {
	q    *question
	best unitHit
	// chunk is the ID of the best passage's chunk.
	chunk string
	ps    *passages
}

// Gate measures the evidence for the question and each of its parts.
func (g *Gate) Gate(ctx context.Context, req answer.GateRequest) (answer.Evidence, error) {
	corp, err := g.opts.Corpus.Get(ctx)
	if err != nil {
		return answer.Evidence{}, err
	}
	query := req.Query
	if query == "" {
		query = req.Question
	}
	model := g.Passage()
	whole := g.measure(ctx, query, req.Hits, corp, model)
	g.mu.RLock()
	observe := g.observe
	g.mu.RUnlock()
	if observe != nil && whole.ps != nil {
		observe(whole.ps.observations(req.Question))
	}
	setRelevance(req.Hits, whole.q)
	ev := g.evidence(whole)
	if len(req.SubQueries) > 1 && len(req.PartHits) == len(req.SubQueries) {
		asks := req.Asks
		if len(asks) != len(req.SubQueries) {
			asks = req.SubQueries
		}
		g.addParts(ctx, &ev, whole, req, asks, corp, model)
	}
	for _, s := range ev.Sources {
		delete(ev.Omitted, s.Hit.Chunk.ID) // a part's source
	}
	g.log.DebugContext(ctx, "gate", slog.String("detail", ev.Detail))
	return ev, nil
}

// measurement is what the gate found for one question (or part) on its
// candidates.
type measurement struct {
	q       *question
	ps      *passages
	hits    []docent.Hit
	sets    []map[string]bool
	pages   []*page
	primary *page
	want    answerType
	f       answer.Features
	missing []qterm
	covered string
}

// measure finds the best passage for text among the first candidates
// (the passage model's most probable), its page (the closest page), and
// measures its features.
func (g *Gate) measure(ctx context.Context, text string, hits []docent.Hit, corp *Corpus, model PassageModel) measurement {
	sets := make([]map[string]bool, len(hits))
	for i, h := range hits {
		sets[i] = termsOf(h.Chunk)
	}
	m := measurement{q: newQuestion(text, corp, sets), hits: hits, sets: sets}
	if len(hits) == 0 || len(m.q.terms) == 0 {
		return m
	}
	m.want = expectedType(m.q.text)
	m.ps = newPassages(ctx, model, m.q, m.want, hits, sets, g.opts.Embedder)
	m.pages = pages(hits, sets, m.q, m.ps)
	m.primary = closest(m.pages)
	m.missing, m.covered = gaps(m.q, m.primary, hits)
	m.f = m.features()
	return m
}

// closest picks the closest page: the first page in rank order, unless
// one of the next evidencePages−1 pages has a passage at least overtake
// more probable than the first page's best (retrieval's order is the
// stronger prior: a lower page must be clearly better to go first).
func closest(pages []*page) *page {
	best := pages[0]
	for _, p := range pages[1:min(len(pages), evidencePages)] {
		if p.best.score >= best.best.score+overtake {
			best = p
		}
	}
	return best
}

// Closest page choice (see closest).
const (
	evidencePages = 3
	overtake      = 0.1
)

// features measures the closest page's best passage.
func (m measurement) features() answer.Features {
	q, p := m.q, m.primary
	h := m.hits[p.best.hit]
	f := answer.Features{
		Passage:  p.best.score,
		Coverage: p.best.cov,
		Chunk:    q.coverage(m.sets[p.best.hit]),
		Page:     p.cov,
		Cosine:   min(1, max(0, h.VectorScore)),
		Length:   min(1, float64(len(q.terms))/lengthScale),
	}
	if h.KeywordRank > 0 {
		f.Keyword = 1 / float64(h.KeywordRank)
	}
	f.Precision = q.precision(p.best.u)
	for _, o := range m.pages {
		if o != p {
			f.Runner = max(f.Runner, o.best.score)
		}
	}
	on := 0
	for _, i := range p.hits {
		if i < agreementTop {
			on++
		}
	}
	f.Agreement = float64(on) / float64(min(agreementTop, len(m.hits)))
	if m.want != anyType {
		f.Asks = 1
		if q.answers(p.best.u, m.want) {
			f.Kind = 1
		}
	}
	if q.total > 0 {
		for _, t := range m.missing {
			f.Missing += t.IDF
		}
		f.Missing /= q.total
		for _, t := range q.terms {
			if t.DF == 0 {
				f.Unknown += t.IDF
			}
			if !p.terms[t.Term] {
				f.Gap = max(f.Gap, t.IDF*float64(t.Share)/q.total)
			}
		}
		f.Unknown /= q.total
	}
	return f
}

// evidence turns the whole question's measurement into answer.Evidence.
func (g *Gate) evidence(m measurement) answer.Evidence {
	ev := answer.Evidence{Features: m.f}
	if m.q != nil {
		ev.Terms = m.q.weights()
	}
	if m.primary == nil {
		ev.Detail = "no candidates"
		if len(m.hits) > 0 {
			ev.Detail = "no content terms"
		}
		return ev
	}
	ev.Sources = g.sources(m)
	ev.Omitted = g.omitted(m, ev.Sources)
	ev.Pages = uncertainPages(m)
	ev.Missing, ev.Covered = uniqueWords(unmentioned(m.missing, m.sets)), m.covered
	ev.Conflict, ev.ConflictNote = detectConflict(ev.Sources, m.q.sc, map[int]bool{1: true})
	ev.Basis = &basis{q: m.q, best: m.primary.best, chunk: m.hits[m.primary.best.hit].Chunk.ID, ps: m.ps}
	ev.Detail = fmt.Sprintf("closest %s (rank %d): passage p %.2f covers %.2f, page %.2f, %d sources",
		m.hits[m.primary.best.hit].Chunk.DocID, m.primary.best.hit+1, m.f.Passage, m.f.Coverage, m.f.Page, len(ev.Sources))
	if len(ev.Missing) > 0 {
		ev.Detail += "; lacks " + joinAnd(ev.Missing)
	}
	return ev
}

// addParts measures each part of a multi-part question on the whole
// question's candidates and on its own, keeping the better measurement
// (the whole question carries context a short part lacks), and adds each
// part's sources (at most sourcesPerPart) to the evidence's.
func (g *Gate) addParts(ctx context.Context, ev *answer.Evidence, whole measurement, req answer.GateRequest, asks []string, corp *Corpus, model PassageModel) {
	byChunk := map[string]int{}
	for _, s := range ev.Sources {
		byChunk[s.Hit.Chunk.ID] = s.N
	}
	add := func(h docent.Hit) int {
		if n, ok := byChunk[h.Chunk.ID]; ok {
			return n
		}
		n := len(ev.Sources) + 1
		byChunk[h.Chunk.ID] = n
		ev.Sources = append(ev.Sources, answer.Source{N: n, Hit: h, Relevance: h.Relevance})
		return n
	}
	for i, sq := range req.SubQueries {
		own := g.measure(ctx, sq, req.PartHits[i], corp, model)
		if w := g.measure(ctx, sq, req.Hits, corp, model); w.primary != nil && (own.primary == nil || w.f.Passage >= own.f.Passage) {
			own = w
		}
		pe := answer.PartEvidence{Ask: asks[i], Features: own.f}
		if own.q != nil {
			pe.Terms = own.q.weights()
		}
		if own.primary != nil {
			for k, s := range g.sources(own) {
				if k == sourcesPerPart {
					break
				}
				pe.Sources = append(pe.Sources, add(s.Hit))
			}
			pe.Missing = uniqueWords(unmentioned(own.missing, own.sets))
		}
		ev.Parts = append(ev.Parts, pe)
	}
}

// sourcesPerPart is the most sources a part brings.
const sourcesPerPart = 2

// setRelevance records on each hit the IDF share of the question's terms
// its chunk holds, for the trace.
func setRelevance(hits []docent.Hit, q *question) {
	for i, h := range hits {
		hits[i].Relevance = round4(q.coverage(termsOf(h.Chunk)))
	}
}

// unitHit is a unit of a candidate with its coverage of the question and
// its passage probability.
type unitHit struct {
	hit   int // index into the hits
	u     unit
	cov   float64
	score float64
}

// page is the evidence one document gives among the candidates.
type page struct {
	key    string
	hits   []int           // its candidates, best first
	chunks []docent.Chunk  // their chunks, in the same order
	terms  map[string]bool // union of their terms
	cov    float64         // coverage of the question by terms
	best   unitHit         // its most probable passage
}

// pages groups hits by document, in rank order, with each page's
// evidence: its coverage, and its best passage among the first
// passageDepth candidates (pages only further down have none: score -1).
func pages(hits []docent.Hit, sets []map[string]bool, q *question, ps *passages) []*page {
	var out []*page
	byKey := map[string]*page{}
	for i, h := range hits {
		k := search.ChunkDoc(h.Chunk)
		p := byKey[k]
		if p == nil {
			p = &page{key: k, terms: map[string]bool{}, best: unitHit{hit: i, cov: 0, score: -1}}
			byKey[k] = p
			out = append(out, p)
		}
		p.hits = append(p.hits, i)
		p.chunks = append(p.chunks, h.Chunk)
		for t := range sets[i] {
			p.terms[t] = true
		}
		if b, ok := ps.best(i); ok && b.score > p.best.score {
			p.best = b
		}
	}
	for _, p := range out {
		p.cov = q.coverage(p.terms)
	}
	return out
}

// passages holds the passage probabilities of the first candidates of
// one question.
type passages struct {
	model PassageModel
	q     *question
	want  answerType
	hits  []docent.Hit
	sets  []map[string]bool
	top   float64 // the best fused score
	// pageRank and pageCov give each candidate's page rank and coverage.
	pageRank []int
	pageCov  []float64
	// p holds each candidate's unit probabilities, by unit order, and
	// sims their cosines with the question (nil without an embedder).
	p    [][]float64
	sims [][]float64
}

// sim returns the cosine of candidate i's unit k with the question.
func (ps *passages) sim(i, k int) float64 {
	if i < len(ps.sims) && k < len(ps.sims[i]) {
		return ps.sims[i][k]
	}
	return 0
}

// newPassages scores the units of the first passageDepth candidates.
func newPassages(ctx context.Context, model PassageModel, q *question, want answerType, hits []docent.Hit, sets []map[string]bool, emb Embedder) *passages {
	ps := &passages{model: model, q: q, want: want, hits: hits, sets: sets, p: make([][]float64, min(len(hits), passageDepth))}
	for _, h := range hits {
		ps.top = max(ps.top, h.Score)
	}
	ps.pageRank, ps.pageCov = pageStats(q, hits, sets)
	if emb != nil {
		ps.sims = unitSims(ctx, emb, q.text, hits[:len(ps.p)])
	}
	seen := map[string]bool{}
	for i := range ps.p {
		if seen[hits[i].Chunk.ID] {
			continue
		}
		seen[hits[i].Chunk.ID] = true
		units := unitsOf(hits[i].Chunk)
		ps.p[i] = make([]float64, len(units))
		c := ps.info(i)
		for k, u := range units {
			ps.p[i][k] = model.score(passageFeatures(q, c, u, want, ps.sim(i, k)))
		}
	}
	return ps
}

// unitSims embeds the question and every unit of hits in one call and
// returns each unit's cosine with the question; nil when embedding
// fails (the feature is then 0).
func unitSims(ctx context.Context, emb Embedder, question string, hits []docent.Hit) [][]float64 {
	texts := []string{question}
	for _, h := range hits {
		for _, u := range unitsOf(h.Chunk) {
			texts = append(texts, u.display())
		}
	}
	vs, err := emb.EmbedDocuments(ctx, texts)
	if err != nil || len(vs) != len(texts) {
		return nil
	}
	out := make([][]float64, len(hits))
	k := 1
	for i, h := range hits {
		n := len(unitsOf(h.Chunk))
		out[i] = make([]float64, n)
		for j := range n {
			out[i][j] = cosine(vs[0], vs[k])
			k++
		}
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		if i >= len(b) {
			break
		}
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// info describes candidate i for the passage features.
func (ps *passages) info(i int) candidateInfo {
	fused := 1.0
	if ps.top > 0 {
		fused = max(0, ps.hits[i].Score) / ps.top
	}
	return candidateInfo{rank: i, fused: fused, hit: ps.hits[i], set: ps.sets[i], pageRank: ps.pageRank[i], pageCov: ps.pageCov[i]}
}

// pageStats returns, for each hit, the rank of its page among the hits'
// pages (in order of first appearance) and the coverage of the question
// by the terms of that page's hits together.
func pageStats(q *question, hits []docent.Hit, sets []map[string]bool) ([]int, []float64) {
	rank := make([]int, len(hits))
	cov := make([]float64, len(hits))
	byKey := map[string]int{}
	var union []map[string]bool
	for i, h := range hits {
		k := search.ChunkDoc(h.Chunk)
		r, ok := byKey[k]
		if !ok {
			r = len(union)
			byKey[k] = r
			union = append(union, map[string]bool{})
		}
		rank[i] = r
		for t := range sets[i] {
			union[r][t] = true
		}
	}
	for i := range hits {
		cov[i] = q.coverage(union[rank[i]])
	}
	return rank, cov
}

// best returns candidate i's most probable unit.
func (ps *passages) best(i int) (unitHit, bool) {
	if i >= len(ps.p) || len(ps.p[i]) == 0 {
		return unitHit{}, false
	}
	units := unitsOf(ps.hits[i].Chunk)
	b := unitHit{hit: i, score: -1}
	for k, v := range ps.p[i] {
		if v > b.score {
			b = unitHit{hit: i, u: units[k], cov: ps.q.unitCoverage(units[k]), score: v}
		}
	}
	return b, true
}

// of returns the probability of the unit at order ord of the chunk with
// the given ID among the scored candidates, and false when that chunk
// was not scored.
func (ps *passages) of(chunkID string, ord int) (float64, bool) {
	for i := range ps.p {
		if ps.hits[i].Chunk.ID == chunkID && ord < len(ps.p[i]) {
			return ps.p[i][ord], true
		}
	}
	return 0, false
}

// gaps returns the question's specific details (salient words: names and
// codes) that the closest page lacks and that are not opaque identifiers,
// and, when the page's best passage is an entry of a table or list keyed
// by name, the names it lists instead.
func gaps(q *question, p *page, hits []docent.Hit) (missing []qterm, covered string) {
	for _, t := range q.terms {
		if t.Salient && !p.terms[t.Term] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 && p.best.u.Group > 0 && p.best.u.Key != "" {
		covered = siblings(hits[p.best.hit], p.best.u)
	}
	return missing, covered
}

// siblings lists the keys of the table or list that u belongs to, in
// document order ("United States, Germany, Canada"), "" when there are
// fewer than two.
func siblings(h docent.Hit, u unit) string {
	var keys []string
	seen := map[string]bool{}
	for _, o := range unitsOf(h.Chunk) {
		if o.Group != u.Group || o.Key == "" || seen[o.Key] {
			continue
		}
		seen[o.Key] = true
		keys = append(keys, o.Key)
	}
	if len(keys) < 2 {
		return ""
	}
	if len(keys) > maxCovered {
		keys = append(keys[:maxCovered], "others")
	}
	return joinAnd(keys)
}

// unmentioned keeps the terms that no candidate holds. The closest page
// lacking a detail weighs in the decision (Features.Missing); what the
// reply says the docs "don't mention" must be absent from every page
// retrieved, not only from the closest ("Docker" is missing from the
// health-check page and on every page about Docker).
func unmentioned(terms []qterm, sets []map[string]bool) []qterm {
	var out []qterm
	for _, t := range terms {
		if !slices.ContainsFunc(sets, func(s map[string]bool) bool { return s[t.Term] }) {
			out = append(out, t)
		}
	}
	return out
}

// uniqueWords returns the words of terms as written, each once.
func uniqueWords(terms []qterm) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		if !seen[t.Word] {
			seen[t.Word] = true
			out = append(out, t.Word)
		}
	}
	return out
}

// sources picks the answer's sources: the closest page's best chunk
// first, then up to chunksPerPage−1 more chunks of that page whose best
// passage scores sourceShare of it, then, in rank order, one chunk of
// every further page whose best passage covers sourceShare of what the
// closest page's does (pages superseded by a newer version among the
// candidates left out), up to MaxSources; and a near-duplicate version of
// a source that disagrees with it.
func (g *Gate) sources(m measurement) []answer.Source {
	var srcs []answer.Source
	seen := map[string]bool{}
	texts := map[string]bool{}
	add := func(i int) {
		h := m.hits[i]
		seen[search.ChunkDoc(h.Chunk)] = true
		if texts[sameText(h.Chunk)] {
			return // a copy of a source's text tells the generator nothing more
		}
		texts[sameText(h.Chunk)] = true
		srcs = append(srcs, answer.Source{N: len(srcs) + 1, Hit: h, Relevance: h.Relevance})
	}
	add(m.primary.best.hit)
	for _, i := range m.primary.hits[:min(len(m.primary.hits), chunksPerPage)] {
		if len(srcs) == g.opts.MaxSources || i == m.primary.best.hit {
			continue
		}
		if b, ok := m.ps.best(i); ok && b.score >= sourceShare*m.primary.best.score {
			add(i)
		}
	}
	for _, p := range m.pages {
		if len(srcs) == g.opts.MaxSources {
			break
		}
		if seen[p.key] || p.best.score < sourceShare*m.primary.best.score || superseded(p, m) {
			continue
		}
		add(p.best.hit)
	}
	for i, h := range m.hits {
		if seen[search.ChunkDoc(h.Chunk)] {
			continue
		}
		for _, s := range srcs {
			if ok, _, _ := conflicts(s.Hit.Chunk, h.Chunk, m.q.sc); ok {
				add(i)
				return srcs
			}
		}
	}
	return srcs
}

// omitted says why each candidate that is not a source was left out, by
// the rules sources applies, in its order.
func (g *Gate) omitted(m measurement, srcs []answer.Source) map[string]string {
	sent := map[string]int{}     // chunk ID -> source number
	texts := map[string]int{}    // chunk text -> source number
	pageSent := map[string]int{} // page -> its first source's number
	for _, s := range srcs {
		sent[s.Hit.Chunk.ID] = s.N
		if _, ok := texts[sameText(s.Hit.Chunk)]; !ok {
			texts[sameText(s.Hit.Chunk)] = s.N
		}
		if _, ok := pageSent[search.ChunkDoc(s.Hit.Chunk)]; !ok {
			pageSent[search.ChunkDoc(s.Hit.Chunk)] = s.N
		}
	}
	pageOf := map[int]*page{}
	for _, p := range m.pages {
		for _, i := range p.hits {
			pageOf[i] = p
		}
	}
	floor := sourceShare * m.primary.best.score
	full := len(srcs) >= g.opts.MaxSources
	limit := fmt.Sprintf("cut by the source limit (%d sources)", g.opts.MaxSources)
	out := map[string]string{}
	for i, h := range m.hits {
		id := h.Chunk.ID
		if _, ok := sent[id]; ok {
			continue
		}
		if _, ok := out[id]; ok {
			continue
		}
		p := pageOf[i]
		b, read := m.ps.best(i)
		var why string
		switch {
		case texts[sameText(h.Chunk)] > 0:
			why = fmt.Sprintf("a duplicate of source [%d] (the same text)", texts[sameText(h.Chunk)])
		case !read && i >= passageDepth:
			why = fmt.Sprintf("ranked %d, below the first %d candidates the gate reads", i+1, passageDepth)
		case !read:
			why = "no passage of it answers the question's terms"
		case p == m.primary:
			switch {
			case !slices.Contains(p.hits[:min(len(p.hits), chunksPerPage)], i):
				why = fmt.Sprintf("the closest page gives at most %d chunks, its best ranked", chunksPerPage)
			case b.score < floor:
				why = fmt.Sprintf("below the gate's floor: its best passage (p %.2f) is under %.0f%% of the closest passage's (p %.2f)",
					b.score, 100*sourceShare, m.primary.best.score)
			default:
				why = limit
			}
		case pageSent[p.key] > 0:
			why = fmt.Sprintf("another chunk of its page was sent (source [%d]): one chunk per further page", pageSent[p.key])
		case i != p.best.hit:
			why = fmt.Sprintf("one chunk per further page: candidate %d holds the page's best passage", p.best.hit+1)
		case p.best.score < floor:
			why = fmt.Sprintf("below the gate's floor: its page's best passage (p %.2f) is under %.0f%% of the closest page's (p %.2f, candidate %d)",
				p.best.score, 100*sourceShare, m.primary.best.score, m.primary.best.hit+1)
		case superseded(p, m):
			why = "a newer version of its page is among the candidates"
		case full:
			why = limit
		default:
			why = "not picked by the gate"
		}
		out[id] = why
	}
	return out
}

// sameText is a chunk's text without its "Title > Section" line, its
// spacing folded, so that copies of one passage on two pages compare
// equal.
func sameText(c docent.Chunk) string {
	text := c.Text
	if head, body, ok := strings.Cut(text, "\n\n"); ok && head == strings.Join(append([]string{c.Title}, c.Section...), " > ") {
		text = body
	}
	return strings.Join(strings.Fields(text), " ")
}

// uncertainPages returns the pages an uncertain reply links: the closest
// page first, then the next distinct pages in rank order (versions
// superseded by a newer one among the candidates left out), each with
// its best passage.
func uncertainPages(m measurement) []answer.Page {
	order := []*page{m.primary}
	for _, p := range m.pages {
		if len(order) == answer.MaxPages {
			break
		}
		if p != m.primary && p.best.score > 0 && !superseded(p, m) {
			order = append(order, p)
		}
	}
	out := make([]answer.Page, len(order))
	for i, p := range order {
		out[i] = answer.Page{Hit: m.hits[p.best.hit], Passage: pagePassage(m.hits[p.best.hit].Chunk, p.best.u)}
	}
	return out
}

// passage is a unit as an uncertain reply quotes it: its text, source
// markers written as plain numbers.
func passage(u unit) string { return plainMarkers(u.Text) }

// maxLeadItems is how many items of the list a lead-in introduces an
// uncertain reply's passage shows after it.
const maxLeadItems = 3

// pagePassage is the passage an uncertain reply quotes for a page: u, and
// when u only leads in to what follows ("Make sure you have the
// following installed:"), the short code block it introduces or the
// first items of the list after it, which say what it leads to.
func pagePassage(c docent.Chunk, u unit) string {
	text := strings.TrimSpace(u.Text)
	if !strings.HasSuffix(text, ":") {
		return passage(u)
	}
	if len(u.Code) > 0 {
		return plainMarkers(u.display())
	}
	units := unitsOf(c)
	var items []string
	for _, o := range units[min(u.Ord+1, len(units)):] {
		if o.Kind == kindSentence || (len(items) > 0 && o.Group != units[u.Ord+1].Group) || len(items) == maxLeadItems {
			break
		}
		items = append(items, o.Text)
	}
	if len(items) == 0 {
		return passage(u)
	}
	return plainMarkers(text + " " + strings.Join(items, "; "))
}

// superseded reports whether a newer version of page p is among the
// candidates (see newerVersion).
func superseded(p *page, m measurement) bool {
	for _, o := range m.pages {
		if o.key != p.key && newerVersion(p.chunks, o.chunks) {
			return true
		}
	}
	return false
}

// newerVersion reports whether the document of chunks b is a newer
// version of the document of chunks a (each its chunks among the
// candidates, first chunk first): updated on a later day (search.Newer),
// its title alike, and one of its chunks under headings alike to one of
// a's (search.SimilarHeadings: title and section path). The title alone is
// not enough: a site's pages often share one ("Traefik & Docker" for a
// provider's setup and for its routing labels, "Configuration" in every
// folder) and say different things, while a new version of a page
// repeats the sections of the one it replaces.
func newerVersion(a, b []docent.Chunk) bool {
	if len(a) == 0 || len(b) == 0 || !search.Newer(b[0].UpdatedAt, a[0].UpdatedAt) ||
		jaccard(titleTerms(a[0].Title), titleTerms(b[0].Title)) < search.MinHeadingJaccard {
		return false
	}
	for _, x := range a {
		for _, y := range b {
			if search.SimilarHeadings(x, y) {
				return true
			}
		}
	}
	return false
}

// holdsCodes reports whether u holds every code term of the question.
func holdsCodes(q *question, u unit) bool {
	for _, t := range q.terms {
		if t.Code && unitWeight(u, t.Term) == 0 {
			return false
		}
	}
	return true
}
