// Package bm25 is an in-memory inverted index over analyzed chunk fields
// (title, section path, text, fenced code), ranked by BM25 with field
// weights and a term-coverage factor. search/local keeps one beside its
// SQLite file: the database stores each chunk's Doc (encoded by AppendDoc),
// and the index is rebuilt from those at start and updated after every
// committed write, so it never holds what the database does not.
//
// The score of a document d for a query is
//
//	coverage(d)^Coverage · Σ_t w(t) · idf(t) · f(t,d)·(k1+1) / (f(t,d) + k1·(1 − b + b·|d|/avg|d|))
//
// where f(t,d) is the field-weighted frequency of t in d (title counts
// Weights[Title] times, and so on), |d| the document's length in tokens
// over all fields, b = B[Text], and w(t) = 1 + Repeats·ln(query count of
// t): SQLite FTS5's bm25() with column weights, which docent used before,
// except for the IDF. FTS5's ln((N − n + 0.5)/(n + 0.5)) falls to nothing
// for a term in half the chunks or more; Lucene's (and Bleve's)
// ln(1 + (N − n + 0.5)/(n + 0.5)) never does, and ranks better on SciFact
// train (bm25 nDCG@10 0.7047 -> 0.7075). With Params.PerField the score is
// BM25F instead (Robertson, Zaragoza and Taylor, "Simple BM25 extension to
// multiple weighted fields", 2004): each field's frequency normalised by
// that field's own length, weighted, summed, then saturated once.
// coverage(d) is the share of the query's IDF mass that d matches (see
// Params.Coverage).
package bm25

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"

	"github.com/docent-hq/docent/internal/topk"
	"github.com/docent-hq/docent/search"
)

// Field is one of the indexed fields of a chunk.
type Field int

// The indexed fields.
const (
	// Title is the document title.
	Title Field = iota
	// Section is the heading path, outermost first.
	Section
	// Text is the body's prose: everything but fenced code.
	Text
	// Code is the body's fenced code.
	Code
	NumFields
)

// Defaults for Params fields left zero.
const (
	DefaultK1       = 1.2
	DefaultCoverage = 0
	DefaultRepeats  = 0.5
)

// DefaultWeights are the field weights: title 2, section path 1.5, text
// 1, code 1.
var DefaultWeights = [NumFields]float64{2, 1.5, 1, 1}

// DefaultB are the length normalisations: BM25's usual 0.75 for the one
// length of the default scoring (B[Text]); with PerField, titles and
// headings, short and whose length says little, get 0.3.
var DefaultB = [NumFields]float64{0.3, 0.3, 0.75, 0.75}

// Params tune the ranking. Zero fields take the defaults.
type Params struct {
	// K1 is BM25's term-frequency saturation.
	K1 float64
	// B are the fields' length normalizations; all zero means DefaultB.
	B [NumFields]float64
	// Weights multiply each field's term frequencies; all zero means
	// DefaultWeights.
	Weights [NumFields]float64
	// PerField normalises each field by its own length (BM25F) instead of
	// the weighted frequency by the chunk's whole length. Measured with
	// weights 2, 2, 1, 0.5 and B 0.3, 0.3, 0.75, 0.75: SciFact even (test
	// BM25 nDCG@10 0.6965 against 0.6981), realdocs-dev's odd half up
	// (section hit@5 0.667 against 0.600), the handbook sets down (golden
	// page hit@1 0.756 against 0.822, asked 0.909 against 0.922), so it is
	// off by default.
	PerField bool
	// Repeats weighs a query term's repeats (Query.Counts): a term said n
	// times weighs 1 + Repeats·ln(n) times as much. Zero means
	// DefaultRepeats, negative counts every term once. On SciFact's
	// long-context queries (a pasted paragraph before the claim) 0.5 lifts
	// BM25 from nDCG@10 0.7599 to 0.7755 (short queries: 0.6981 to 0.6965).
	Repeats float64
	// Coverage is the exponent of the coverage factor: a document's score
	// is multiplied by (matched IDF mass / query IDF mass)^Coverage, where
	// the query's IDF mass sums idf(t) over its distinct terms that occur
	// in the index. 0 turns it off; 1 is an IDF-weighted form of Lucene's
	// and Bleve's coordination factor.
	Coverage float64
}

func (p Params) withDefaults() Params {
	if p.K1 == 0 {
		p.K1 = DefaultK1
	}
	if p.B == [NumFields]float64{} {
		p.B = DefaultB
	}
	switch {
	case p.Repeats == 0:
		p.Repeats = DefaultRepeats
	case p.Repeats < 0:
		p.Repeats = 0
	}
	if p.Weights == [NumFields]float64{} {
		p.Weights = DefaultWeights
	}
	return p
}

// Doc is one document's analyzed fields: its distinct terms, in order,
// each with its frequency in every field, and each field's length in
// tokens, stopwords included (as FTS5 counted it: on SciFact train this
// ranks better than lengths in indexed terms, nDCG@10 0.7022 -> 0.7051).
type Doc struct {
	Terms []string
	Freqs [][NumFields]uint32
	Lens  [NumFields]uint32
}

// NewDoc analyzes the fields' texts with search.AnalyzeKeywords.
func NewDoc(fields [NumFields]string) Doc {
	var d Doc
	at := map[string]int{}
	for f, text := range fields {
		d.Lens[f] = uint32(search.CountTokens(text))
		search.AnalyzeKeywords(text, func(t string) {
			i, ok := at[t]
			if !ok {
				i = len(d.Terms)
				at[t] = i
				d.Terms = append(d.Terms, t)
				d.Freqs = append(d.Freqs, [NumFields]uint32{})
			}
			d.Freqs[i][f]++
		})
	}
	// Sorted, so that the same fields always encode to the same bytes.
	order := make([]int, len(d.Terms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(d.Terms[a], d.Terms[b]) })
	terms := make([]string, len(order))
	freqs := make([][NumFields]uint32, len(order))
	for i, o := range order {
		terms[i], freqs[i] = d.Terms[o], d.Freqs[o]
	}
	d.Terms, d.Freqs = terms, freqs
	return d
}

// AppendDoc appends d's encoding to b: the field lengths, the number of
// terms, then each term's length, bytes and per-field frequencies, all
// unsigned varints.
func AppendDoc(b []byte, d Doc) []byte {
	for _, l := range d.Lens {
		b = binary.AppendUvarint(b, uint64(l))
	}
	b = binary.AppendUvarint(b, uint64(len(d.Terms)))
	for i, t := range d.Terms {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		for _, f := range d.Freqs[i] {
			b = binary.AppendUvarint(b, uint64(f))
		}
	}
	return b
}

// ErrCorrupt is returned for an encoded Doc that does not decode.
var ErrCorrupt = errors.New("bm25: corrupt document encoding")

// decode calls fn with each term (valid only during the call) and its
// frequencies, and returns the field lengths.
func decode(b []byte, fn func(term []byte, freqs [NumFields]uint32)) ([NumFields]uint32, error) {
	var lens [NumFields]uint32
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > math.MaxUint32 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	for f := range lens {
		v, ok := next()
		if !ok {
			return lens, ErrCorrupt
		}
		lens[f] = uint32(v)
	}
	n, ok := next()
	if !ok {
		return lens, ErrCorrupt
	}
	for range n {
		l, ok := next()
		if !ok || l > uint64(len(b)) {
			return lens, ErrCorrupt
		}
		term := b[:l]
		b = b[l:]
		var freqs [NumFields]uint32
		for f := range freqs {
			v, ok := next()
			if !ok {
				return lens, ErrCorrupt
			}
			freqs[f] = uint32(v)
		}
		fn(term, freqs)
	}
	if len(b) != 0 {
		return lens, ErrCorrupt
	}
	return lens, nil
}

// EachTerm calls fn with each term of the encoded Doc enc, in order (term
// is valid only during the call), and its frequency in every field.
func EachTerm(enc []byte, fn func(term []byte, freqs [NumFields]uint32)) error {
	_, err := decode(enc, fn)
	return err
}

// DecodeDoc parses what AppendDoc wrote.
func DecodeDoc(b []byte) (Doc, error) {
	var d Doc
	lens, err := decode(b, func(term []byte, freqs [NumFields]uint32) {
		d.Terms = append(d.Terms, string(term))
		d.Freqs = append(d.Freqs, freqs)
	})
	d.Lens = lens
	return d, err
}

// postings are one term's documents, in the order they were added, with
// the term's frequency in each field of each (capped at 65535).
type postings struct {
	docs []uint32
	freq [][NumFields]uint16
}

// Index is the inverted index. Documents are named by the caller's keys
// (search/local uses SQLite rowids). It is not safe for concurrent use
// while it is written; Search may run concurrently with other Searches.
type Index struct {
	p Params

	ids   map[string]uint32 // term -> term ID
	terms []string          // term ID -> term
	lists []postings        // by term ID
	df    []uint32          // live documents per term ID

	keys  []int64             // by docno; -1 once removed
	lens  [][NumFields]uint32 // field lengths by docno
	docno map[int64]uint32

	live     int              // documents not removed
	totalLen [NumFields]int64 // over live documents
	dead     int              // removed documents still in postings

	scratch sync.Pool
}

// New returns an empty index.
func New(p Params) *Index {
	return &Index{p: p.withDefaults(), ids: map[string]uint32{}, docno: map[int64]uint32{}}
}

// Len returns the number of documents in the index.
func (x *Index) Len() int { return x.live }

// DocFreq returns how many live documents hold each of terms (those no
// document holds are left out) and how many documents there are.
func (x *Index) DocFreq(terms []string) (map[string]int, int) {
	out := make(map[string]int, len(terms))
	for _, t := range terms {
		if id, ok := x.ids[t]; ok && x.df[id] > 0 {
			out[t] = int(x.df[id])
		}
	}
	return out, x.live
}

// Add indexes the encoded Doc under key, replacing what key held. It
// returns ErrCorrupt when enc does not decode, and then changes nothing.
func (x *Index) Add(key int64, enc []byte) error {
	_, err := x.AddIDs(key, enc, nil)
	return err
}

// AddIDs is Add that also appends to ids the term ID (see TermID) of
// each of enc's terms, in order.
func (x *Index) AddIDs(key int64, enc []byte, ids []uint32) ([]uint32, error) {
	if _, err := decode(enc, func([]byte, [NumFields]uint32) {}); err != nil {
		return ids, err
	}
	if err := x.Remove(key, nil); err != nil {
		return ids, err
	}
	d := uint32(len(x.keys))
	lens, _ := decode(enc, func(term []byte, freqs [NumFields]uint32) {
		id := x.termID(term)
		ids = append(ids, id)
		var f [NumFields]uint16
		for i, n := range freqs {
			f[i] = uint16(min(n, math.MaxUint16))
		}
		l := &x.lists[id]
		l.docs = append(l.docs, d)
		l.freq = append(l.freq, f)
		x.df[id]++
	})
	x.keys = append(x.keys, key)
	x.lens = append(x.lens, lens)
	x.docno[key] = d
	x.live++
	for f, l := range lens {
		x.totalLen[f] += int64(l)
	}
	return ids, nil
}

// TermIDs appends to ids the term ID of each of the encoded Doc's terms,
// in order, adding the terms the dictionary lacks (see TermID), without
// indexing a document.
func (x *Index) TermIDs(enc []byte, ids []uint32) ([]uint32, error) {
	if _, err := decode(enc, func([]byte, [NumFields]uint32) {}); err != nil {
		return ids, err
	}
	_, err := decode(enc, func(term []byte, _ [NumFields]uint32) { ids = append(ids, x.termID(term)) })
	return ids, err
}

// TermID returns term's ID in the index's dictionary, adding the term
// (held by no document) when the index does not know it. IDs are stable
// for the life of the Index; Term turns one back into its term. It is a
// write: it may not run concurrently with Search.
func (x *Index) TermID(term []byte) uint32 { return x.termID(term) }

// Term returns the term of id, an ID TermID returned.
func (x *Index) Term(id uint32) string { return x.terms[id] }

func (x *Index) termID(term []byte) uint32 {
	if id, ok := x.ids[string(term)]; ok {
		return id
	}
	id := uint32(len(x.lists))
	t := string(term)
	x.ids[t] = id
	x.terms = append(x.terms, t)
	x.lists = append(x.lists, postings{})
	x.df = append(x.df, 0)
	return id
}

// Remove drops key's document; enc must be the encoding it was added
// with (its terms' document counts are decremented), or nil to look the
// terms up in the postings, which is slower. An unknown key is not an
// error.
func (x *Index) Remove(key int64, enc []byte) error {
	d, ok := x.docno[key]
	if !ok {
		return nil
	}
	if enc != nil {
		if _, err := decode(enc, func(term []byte, _ [NumFields]uint32) {
			if id, ok := x.ids[string(term)]; ok {
				x.df[id]--
			}
		}); err != nil {
			return err
		}
	} else {
		for id := range x.lists {
			if slices.Contains(x.lists[id].docs, d) {
				x.df[id]--
			}
		}
	}
	delete(x.docno, key)
	x.keys[d] = -1
	x.live--
	for f, l := range x.lens[d] {
		x.totalLen[f] -= int64(l)
	}
	x.dead++
	if x.dead > 1024 && x.dead > x.live {
		x.compact()
	}
	return nil
}

// compact drops removed documents from the postings and renumbers the
// rest.
func (x *Index) compact() {
	renum := make([]uint32, len(x.keys))
	var keys []int64
	var lens [][NumFields]uint32
	for d, k := range x.keys {
		if k < 0 {
			renum[d] = math.MaxUint32
			continue
		}
		renum[d] = uint32(len(keys))
		keys = append(keys, k)
		lens = append(lens, x.lens[d])
		x.docno[k] = renum[d]
	}
	for id := range x.lists {
		l := &x.lists[id]
		n := 0
		for i, d := range l.docs {
			if r := renum[d]; r != math.MaxUint32 {
				l.docs[n], l.freq[n] = r, l.freq[i]
				n++
			}
		}
		l.docs = slices.Clip(l.docs[:n])
		l.freq = slices.Clip(l.freq[:n])
	}
	x.keys, x.lens, x.dead = keys, lens, 0
}

// Hit is a ranked document.
type Hit struct {
	Key   int64
	Score float64
}

// Query is one ranking request.
type Query struct {
	// Terms are the query's distinct analyzed terms
	// (search.AnalyzeKeywords); a repeat in Terms counts once.
	Terms []string
	// Counts, when set, holds how often each of Terms occurs in the
	// query: a term said n times weighs 1 + Params.Repeats·ln(n) times as
	// much (a pasted paragraph names what it is about more than once).
	Counts []int
	// K is how many hits to return.
	K int
	// Accept, when set, keeps only the documents it returns true for,
	// before the ranking is cut to K.
	Accept func(key int64) bool
	// Tie orders documents of equal score (negative: a first); nil orders
	// them by key.
	Tie func(a, b int64) int
}

type scratch struct {
	acc     []float32 // BM25 sum by docno
	cov     []float32 // matched IDF mass by docno
	touched []uint32
}

// Search returns at most q.K documents, best first.
func (x *Index) Search(q Query) []Hit {
	if q.K <= 0 || x.live == 0 {
		return nil
	}
	type qterm struct {
		id  uint32
		idf float64
	}
	var terms []qterm
	var mass float64
	seen := map[uint32]bool{}
	n := float64(x.live)
	for i, t := range q.Terms {
		id, ok := x.ids[t]
		if !ok || seen[id] || x.df[id] == 0 {
			continue
		}
		seen[id] = true
		df := float64(x.df[id])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		if i < len(q.Counts) && q.Counts[i] > 1 {
			idf *= 1 + x.p.Repeats*math.Log(float64(q.Counts[i]))
		}
		terms = append(terms, qterm{id, idf})
		mass += idf
	}
	if len(terms) == 0 {
		return nil
	}

	s, _ := x.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer x.scratch.Put(s)
	if len(s.acc) < len(x.keys) {
		s.acc = make([]float32, len(x.keys))
		s.cov = make([]float32, len(x.keys))
	}
	s.touched = s.touched[:0]
	k1 := x.p.K1
	// Per field: tf_f / (1 − b + b·len/avg) = tf_f / (c0 + c1·len), and
	// the field weight folded in: w·tf_f / (c0 + c1·len).
	// One length over all fields (the default): f / (f + k1·(1 − b +
	// b·|d|/avg|d|)) = f / (f + d0 + d1·|d|).
	var total float64
	for _, l := range x.totalLen {
		total += float64(l)
	}
	avgAll := total / n
	if avgAll == 0 {
		avgAll = 1
	}
	d0, d1 := k1*(1-x.p.B[Text]), k1*x.p.B[Text]/avgAll
	var c0, c1 [NumFields]float64
	for f := range NumFields {
		avg := float64(x.totalLen[f]) / n
		if avg == 0 {
			avg = 1
		}
		b := x.p.B[f]
		c0[f], c1[f] = (1-b)/x.p.Weights[f], b/avg/x.p.Weights[f]
	}
	for _, t := range terms {
		l := &x.lists[t.id]
		for i, d := range l.docs {
			if x.keys[d] < 0 {
				continue
			}
			var f float64
			lens := &x.lens[d]
			var v float64
			if x.p.PerField {
				for fi, tf := range l.freq[i] {
					if tf != 0 && x.p.Weights[fi] > 0 {
						f += float64(tf) / (c0[fi] + c1[fi]*float64(lens[fi]))
					}
				}
				if f == 0 {
					continue
				}
				v = t.idf * f * (k1 + 1) / (f + k1)
			} else {
				var dl float64
				for fi, tf := range l.freq[i] {
					f += x.p.Weights[fi] * float64(tf)
					dl += float64(lens[fi])
				}
				if f == 0 {
					continue
				}
				v = t.idf * f * (k1 + 1) / (f + d0 + d1*dl)
			}
			if s.cov[d] == 0 {
				s.touched = append(s.touched, d)
			}
			s.acc[d] += float32(v)
			s.cov[d] += float32(t.idf)
		}
	}

	tie := q.Tie
	if tie == nil {
		tie = func(a, b int64) int { return cmp.Compare(a, b) }
	}
	// worse reports whether a ranks below b.
	worse := func(a, b Hit) bool {
		if a.Score != b.Score {
			return a.Score < b.Score
		}
		return tie(a.Key, b.Key) > 0
	}
	h := topk.New(q.K, worse, len(s.touched))
	for _, d := range s.touched {
		score := float64(s.acc[d])
		if x.p.Coverage > 0 {
			score *= math.Pow(float64(s.cov[d])/mass, x.p.Coverage)
		}
		s.acc[d], s.cov[d] = 0, 0
		hit := Hit{Key: x.keys[d], Score: score}
		if !h.Admits(hit) {
			continue
		}
		if q.Accept != nil && !q.Accept(hit.Key) {
			continue
		}
		h.Offer(hit)
	}
	return h.Sorted()
}
