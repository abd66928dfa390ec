package bm25

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent/search"
)

func mustAdd(tb testing.TB, x *Index, key int64, title, section, text string) []byte {
	tb.Helper()
	enc := AppendDoc(nil, NewDoc([NumFields]string{title, section, text}))
	if err := x.Add(key, enc); err != nil {
		tb.Fatal(err)
	}
	return enc
}

func keys(hits []Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.Key
	}
	return out
}

func TestDocRoundTrip(t *testing.T) {
	d := NewDoc([NumFields]string{"Password reset", "IT > Accounts", "Reset the password; resetting twice resets nothing."})
	if want := []string{"account", "noth", "password", "reset", "twice"}; !slices.Equal(d.Terms, want) {
		t.Fatalf("terms %q, want %q", d.Terms, want)
	}
	if want := [NumFields]uint32{2, 2, 7}; d.Lens != want {
		t.Errorf("lens %v, want %v", d.Lens, want)
	}
	if want := [NumFields]uint32{1, 0, 3}; d.Freqs[3] != want {
		t.Errorf("reset freqs %v, want %v", d.Freqs[2], want)
	}
	enc := AppendDoc(nil, d)
	got, err := DecodeDoc(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Terms, d.Terms) || !slices.Equal(got.Freqs, d.Freqs) || got.Lens != d.Lens {
		t.Errorf("decoded %+v, want %+v", got, d)
	}
	for _, bad := range [][]byte{nil, enc[:len(enc)-1], append(slices.Clone(enc), 0), {0, 0, 0, 5, 200}} {
		if _, err := DecodeDoc(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeDoc(%v) err = %v, want ErrCorrupt", bad, err)
		}
		if err := New(Params{}).Add(1, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Add(%v) err = %v, want ErrCorrupt", bad, err)
		}
	}
}

// TestScoreFormula checks one score against the formula written out:
// FTS5's weighted frequency and total length, Lucene's IDF; and, with
// PerField, BM25F: each field's frequency normalised by its own length,
// weighted, summed, then saturated once.
func TestScoreFormula(t *testing.T) {
	for _, perField := range []bool{false, true} {
		x := New(Params{PerField: perField})
		mustAdd(t, x, 1, "vpn token", "", "reset the vpn token from the portal")
		mustAdd(t, x, 2, "", "", "portal outage notes")
		mustAdd(t, x, 3, "", "", "lunch menu")
		mustAdd(t, x, 4, "", "", "parking rules")
		hits := x.Search(Query{Terms: []string{"vpn"}, K: 10})
		if len(hits) != 1 || hits[0].Key != 1 {
			t.Fatalf("hits %+v, want doc 1 only", hits)
		}
		const k1 = 1.2
		n, df := 4.0, 1.0
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		var want float64
		if !perField {
			const b = 0.75
			f := 2*1 + 1*1.0            // title once (weight 2), text once
			dl := 2.0 + 7               // title "vpn token", text "reset the vpn token from the portal"
			avg := (dl + 3 + 2 + 2) / n // the other documents have 3, 2 and 2 tokens
			want = idf * f * (k1 + 1) / (f + k1*(1-b+b*dl/avg))
		} else {
			// Title: 2 tokens, average 2/4; text 7 tokens, average
			// (7+3+2+2)/4. Weights title 2, text 1; b title 0.3, text 0.75.
			norm := func(b, l, avg float64) float64 { return 1 - b + b*l/avg }
			f := 2*1/norm(0.3, 2, 0.5) + 1*1/norm(0.75, 7, 3.5)
			want = idf * f * (k1 + 1) / (f + k1)
		}
		if math.Abs(hits[0].Score-want) > 1e-5 {
			t.Errorf("per field %v: score %v, want %v", perField, hits[0].Score, want)
		}
	}
}

// TestFieldAware: a heading that names the query's word outranks a body
// that mentions it in passing; with PerField and a code weight under the
// prose's, a word found only in code counts less than in prose.
func TestFieldAware(t *testing.T) {
	x := New(Params{})
	mustAdd(t, x, 1, "Rate limit", "Configuration > burst", "The largest number of requests allowed to go through in the same "+
		"arbitrarily small period of time; it defaults to one and must be at least one.")
	mustAdd(t, x, 2, "Rate limit", "Configuration > average", "The number of requests allowed on average per period; requests "+
		"over the burst are delayed until the period ends, then served in order.")
	mustAdd(t, x, 3, "Headers", "Configuration > custom", "Headers to add to every request and response, such as a server name "+
		"or a frame policy, with their values written as given.")
	hits := x.Search(Query{Terms: []string{"burst"}, K: 10})
	if got := keys(hits); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("burst ranks %v, want the section named burst first", got)
	}

	y := New(Params{PerField: true, Weights: [NumFields]float64{2, 2, 1, 0.5}})
	add := func(key int64, text, code string) {
		enc := AppendDoc(nil, NewDoc([NumFields]string{"T", "", text, code}))
		if err := y.Add(key, enc); err != nil {
			t.Fatal(err)
		}
	}
	add(1, "set the timeout for slow backends", "")
	add(2, "an example follows", "timeout: 30s")
	add(3, "nothing here", "")
	hits = y.Search(Query{Terms: []string{"timeout"}, K: 10})
	if got := keys(hits); !slices.Equal(got, []int64{1, 2}) || !(hits[0].Score > hits[1].Score) {
		t.Errorf("timeout ranks %v (%v), want prose before code", got, hits)
	}
}

func TestSearchOrderFilterTies(t *testing.T) {
	x := New(Params{})
	for i := range 6 {
		mustAdd(t, x, int64(10+i), "", "", "guide "+strings.Repeat("filler ", i))
	}
	mustAdd(t, x, 20, "", "", "unrelated")
	t.Run("shorter first", func(t *testing.T) {
		if got := keys(x.Search(Query{Terms: []string{"guid"}, K: 3})); !slices.Equal(got, []int64{10, 11, 12}) {
			t.Errorf("hits %v, want [10 11 12]", got)
		}
	})
	t.Run("filter before the cut", func(t *testing.T) {
		got := keys(x.Search(Query{Terms: []string{"guid"}, K: 2, Accept: func(k int64) bool { return k >= 14 }}))
		if !slices.Equal(got, []int64{14, 15}) {
			t.Errorf("hits %v, want [14 15]", got)
		}
	})
	t.Run("ties by the tie function", func(t *testing.T) {
		y := New(Params{})
		for _, k := range []int64{3, 1, 2} {
			mustAdd(t, y, k, "", "", "same text")
		}
		if got := keys(y.Search(Query{Terms: []string{"text"}, K: 3})); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Errorf("default ties %v, want [1 2 3]", got)
		}
		desc := func(a, b int64) int { return int(b - a) }
		if got := keys(y.Search(Query{Terms: []string{"text"}, K: 2, Tie: desc})); !slices.Equal(got, []int64{3, 2}) {
			t.Errorf("tie desc %v, want [3 2]", got)
		}
	})
	t.Run("unknown and repeated terms", func(t *testing.T) {
		a := x.Search(Query{Terms: []string{"guid"}, K: 10})
		b := x.Search(Query{Terms: []string{"guid", "guid", "zzz"}, K: 10})
		if !slices.Equal(a, b) {
			t.Errorf("repeats or unknown terms changed the ranking: %v vs %v", a, b)
		}
		if hits := x.Search(Query{Terms: []string{"zzz"}, K: 10}); hits != nil {
			t.Errorf("unknown term: %v, want none", hits)
		}
	})
}

// TestCoverage: a document matching more of the query's IDF mass gains
// on one with a higher plain BM25 sum from a single term.
func TestCoverage(t *testing.T) {
	build := func(p Params) *Index {
		x := New(p)
		mustAdd(t, x, 1, "", "", "kinase kinase kinase kinase")
		mustAdd(t, x, 2, "", "", "kinase growth in a few cells")
		for i := range 4 {
			mustAdd(t, x, int64(100+i), "", "", fmt.Sprintf("growth factor study %d", i))
		}
		for i := range 16 {
			mustAdd(t, x, int64(200+i), "", "", fmt.Sprintf("unrelated note %d", i))
		}
		return x
	}
	q := Query{Terms: search.Analyze("kinase growth"), K: 2}
	plain, covered := build(Params{}).Search(q), build(Params{Coverage: 1}).Search(q)
	if len(plain) != 2 || len(covered) != 2 || plain[0].Key != 1 || covered[0].Key != 2 {
		t.Fatalf("plain %v, with coverage %v; want doc 1 first without coverage and doc 2 with it", plain, covered)
	}
	// Doc 2 matches the whole query: coverage leaves its score as it was.
	if math.Abs(plain[1].Score-covered[0].Score) > 1e-5 {
		t.Errorf("full match scored %v with coverage, %v without", covered[0].Score, plain[1].Score)
	}
}

// TestRemoveMatchesFreshIndex: after random adds, replacements and
// removals (with compactions), every query ranks as in an index built
// from the surviving documents alone.
func TestRemoveMatchesFreshIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma")
	text := func() string {
		var b strings.Builder
		for range 3 + rng.IntN(12) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		return b.String()
	}
	x := New(Params{Coverage: 0.5})
	docs := map[int64][3]string{}
	encs := map[int64][]byte{}
	for step := range 6000 {
		key := int64(rng.IntN(1500))
		if enc, ok := encs[key]; ok && rng.IntN(3) == 0 {
			if err := x.Remove(key, enc); err != nil {
				t.Fatal(err)
			}
			delete(docs, key)
			delete(encs, key)
			continue
		}
		if enc, ok := encs[key]; ok && step%2 == 0 {
			if err := x.Remove(key, enc); err != nil {
				t.Fatal(err)
			}
		}
		f := [3]string{text(), "", text()}
		docs[key] = f
		encs[key] = mustAdd(t, x, key, f[0], f[1], f[2])
	}
	fresh := New(Params{Coverage: 0.5})
	for k, f := range docs {
		mustAdd(t, fresh, k, f[0], f[1], f[2])
	}
	if x.Len() != len(docs) || fresh.Len() != len(docs) {
		t.Fatalf("Len %d and %d, want %d", x.Len(), fresh.Len(), len(docs))
	}
	for _, q := range [][]string{{"alpha"}, {"beta", "sigma"}, {"gamma", "delta", "kappa", "omicron"}} {
		terms := search.Analyze(strings.Join(q, " "))
		a := x.Search(Query{Terms: terms, K: 50})
		b := fresh.Search(Query{Terms: terms, K: 50})
		if len(a) != len(b) {
			t.Fatalf("%v: %d hits, fresh index %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Key != b[i].Key || math.Abs(a[i].Score-b[i].Score) > 1e-4 {
				t.Fatalf("%v: hit %d = %+v, fresh index %+v", q, i, a[i], b[i])
			}
		}
	}
}

// TestRepeats: a term a query says more than once weighs more (a pasted
// paragraph names its subject again and again); without Counts every term
// counts once.
func TestRepeats(t *testing.T) {
	x := New(Params{})
	mustAdd(t, x, 1, "", "", "the certificate resolver renews every certificate")
	mustAdd(t, x, 2, "", "", "the entry point listens on a port")
	mustAdd(t, x, 3, "", "", "unrelated words only")
	mustAdd(t, x, 4, "", "", "more unrelated words")
	q := Query{Terms: []string{"certif", "port"}, K: 10}
	plain := x.Search(q)
	q.Counts = []int{3, 1}
	weighted := x.Search(q)
	if len(plain) != 2 || len(weighted) != 2 || weighted[0].Key != 1 || !(weighted[0].Score > plain[0].Score) {
		t.Errorf("plain %v, weighted %v: want the thrice-said term's document first, scored higher", plain, weighted)
	}
	off := New(Params{Repeats: -1})
	mustAdd(t, off, 1, "", "", "the certificate resolver renews every certificate")
	mustAdd(t, off, 2, "", "", "unrelated")
	a := off.Search(Query{Terms: []string{"certif"}, K: 1})
	b := off.Search(Query{Terms: []string{"certif"}, Counts: []int{5}, K: 1})
	if a[0].Score != b[0].Score {
		t.Errorf("Repeats off: %v vs %v", a, b)
	}
}
