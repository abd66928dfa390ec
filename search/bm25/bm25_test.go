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
// FTS5's weighted frequency and total length, Lucene's IDF.
func TestScoreFormula(t *testing.T) {
	x := New(Params{})
	mustAdd(t, x, 1, "vpn token", "", "reset the vpn token from the portal")
	mustAdd(t, x, 2, "", "", "portal outage notes")
	mustAdd(t, x, 3, "", "", "lunch menu")
	mustAdd(t, x, 4, "", "", "parking rules")
	hits := x.Search(Query{Terms: []string{"vpn"}, K: 10})
	if len(hits) != 1 || hits[0].Key != 1 {
		t.Fatalf("hits %+v, want doc 1 only", hits)
	}
	const k1, b = 1.2, 0.75
	n, df := 4.0, 1.0
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	f := 2*1 + 1*1.0            // title once (weight 2), text once
	dl := 2.0 + 7               // title "vpn token", text "reset the vpn token from the portal"
	avg := (dl + 3 + 2 + 2) / n // the other documents have 3, 2 and 2 tokens
	want := idf * f * (k1 + 1) / (f + k1*(1-b+b*dl/avg))
	if math.Abs(hits[0].Score-want) > 1e-5 {
		t.Errorf("score %v, want %v", hits[0].Score, want)
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
