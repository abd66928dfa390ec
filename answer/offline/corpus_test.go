package offline

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// spellingChunks hold the spellings a Corpus learns: hyphenated and
// bracketed words, words a question may cut short, and headings whose
// initials spell acronyms.
var spellingChunks = []docent.Chunk{
	wikiPage("sp-1", "space/wifi.md", "Guest Wi-Fi", []string{"Member Lounge Access"}, "", 0,
		"Join the Wi-Fi in the lounge. The 401(k) plan is for staff. Read the performance notes; the kiln performed well."),
	wikiPage("sp-2", "space/wifi.md", "Guest Wi-Fi", []string{"Member Lounge Access"}, "", 1,
		"Acknowledge the house rules. A temporary pass is printed from a template."),
	wikiPage("sp-3", "shop/laser.md", "Laser Cutter", []string{"Lid Safety"}, "", 0, "The laser cutter stops when the lid opens."),
	wikiPage("sp-4", "shop/laser-2.md", "Laser Cutter", []string{"Lens Care"}, "", 0, "Clean the lens weekly."),
	wikiPage("sp-5", "shop/lathe.md", "Lathe Course", nil, "", 0, "The lathe course runs monthly."),
}

func TestCorpusCounts(t *testing.T) {
	c := NewCorpus(spellingChunks)
	if c.N() != len(spellingChunks) {
		t.Errorf("N = %d, want %d", c.N(), len(spellingChunks))
	}
	tests := []struct {
		term string
		df   int
	}{
		{"laser", 2},  // once per chunk, however often it is written
		{"clean", 1},  // in one chunk
		{"wifi", 0},   // the joined spelling is not what the index holds
		{"zither", 0}, // in none
	}
	for _, tt := range tests {
		t.Run(tt.term, func(t *testing.T) {
			if got := c.DF(tt.term); got != tt.df {
				t.Errorf("DF(%q) = %d, want %d", tt.term, got, tt.df)
			}
			n, df := float64(c.N()), float64(tt.df)
			if want := math.Log(1 + (n-df+0.5)/(df+0.5)); math.Abs(c.IDF(tt.term)-want) > 1e-12 {
				t.Errorf("IDF(%q) = %v, want %v", tt.term, c.IDF(tt.term), want)
			}
		})
	}
	if c.IDF("zither") <= c.IDF("clean") || c.IDF("clean") <= c.IDF("laser") {
		t.Errorf("IDF not falling with DF: %v %v %v", c.IDF("zither"), c.IDF("clean"), c.IDF("laser"))
	}
}

func TestCorpusVariant(t *testing.T) {
	c := NewCorpus(spellingChunks)
	tests := []struct {
		name, word, want string
	}{
		{"hyphenated word written joined", "wifi", "wi-fi"},
		{"joined, in capitals", "WIFI", "wi-fi"},
		{"bracketed part written joined", "401k", "401(k)"},
		{"word cut short", "perf", "performance"},
		{"cut short, all words of that start share a stem", "ack", "acknowledge"},
		{"a longer cut", "perfo", "performance"},
		{"cut short in capitals is an acronym, not a cut", "PERF", ""},
		{"cut where the words differ in stem", "temp", ""},
		{"too little left off", "performanc", ""},
		{"acronym of heading words, capitals", "MLA", "member lounge access"},
		{"acronym in lower case, three letters", "mla", "member lounge access"},
		{"acronym of two letters in capitals", "LC", "laser cutter"},
		{"two lower-case letters are too ambiguous", "lc", ""},
		{"acronym of a section heading", "LS", "lid safety"},
		{"a word the docs hold has no variant", "laser", ""},
		{"its inflection neither", "lasers", ""},
		{"a filler spells nothing", "wat", ""},
		{"nothing like it", "zither", ""},
		{"longer than an acronym", "MLAXYZ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := c.Variant(tt.word)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Variant(%q) = %q, %v; want %q", tt.word, got, ok, tt.want)
			}
		})
	}
}

func TestHeadingAcronyms(t *testing.T) {
	tests := []struct {
		heading string
		has     map[string]string
		lacks   []string
	}{
		{"Member Lounge Access", map[string]string{"ml": "member lounge", "mla": "member lounge access", "la": "lounge access"}, nil},
		// A stopword inside a run spells a letter, and a variant without it.
		{"Laser and the Lid", map[string]string{"latl": "laser and the lid", "ll": "laser and the lid"}, []string{"at", "tl"}},
		// A run starts with a word that is not a stopword and holds two.
		{"The Lathe", nil, []string{"tl"}},
		{"One Two Three Four Five Six", map[string]string{"ottff": "one two three four five"}, []string{"ottffs"}},
	}
	for _, tt := range tests {
		t.Run(tt.heading, func(t *testing.T) {
			got := headingAcronyms(tt.heading)
			for ini, phrase := range tt.has {
				if got[ini] != phrase {
					t.Errorf("%q: got %q, want %q (all %v)", ini, got[ini], phrase, got)
				}
			}
			for _, ini := range tt.lacks {
				if _, ok := got[ini]; ok {
					t.Errorf("%q spells %q", ini, got[ini])
				}
			}
		})
	}
}

func TestCorpusAcronymMostFrequent(t *testing.T) {
	// "LC" spells "laser cutter" on two pages and "lathe course" on one:
	// the most frequent phrase wins; a heading repeated by the chunks of
	// one page counts once.
	chunks := append([]docent.Chunk(nil), spellingChunks...)
	for i := range 3 {
		chunks = append(chunks, wikiPage("lc-"+string(rune('a'+i)), "shop/lathe.md", "Lathe Course", nil, "", i+1, "More about the lathe."))
	}
	if got, _ := NewCorpus(chunks).Variant("LC"); got != "laser cutter" {
		t.Errorf("Variant(LC) = %q, want the phrase of most pages", got)
	}
	if got := mostFrequent(map[string]int{"b": 2, "a": 2, "c": 1}); got != (counted{"a", 2}) {
		t.Errorf("mostFrequent tie = %+v, want a (lexical order)", got)
	}
}

func TestCompounds(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Use the Wi-Fi, the on-call list and the 401(k).", []string{"wi-fi", "on-call", "401(k)"}},
		{"A three-part-word here.", []string{"three-part-word"}},
		{"A dash - alone and (brackets) alone.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := search.Compounds(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("compounds = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCorpusHolds(t *testing.T) {
	c := NewCorpus(spellingChunks)
	if !c.holdsAll("laser lens") || c.holdsAll("laser zither") || c.holdsAll("the") {
		t.Errorf("holdsAll wrong")
	}
	if got, ok := c.firstHeld([]string{"zither", "laser lens", "lathe"}); !ok || got != "laser lens" {
		t.Errorf("firstHeld = %q, %v", got, ok)
	}
	if _, ok := c.firstHeld([]string{"zither"}); ok {
		t.Error("firstHeld found a phrase no chunk holds")
	}
}

// loader is a Loader over chunks that counts its scans; each scan waits
// for release when it is set, and fails with err when set.
type loader struct {
	mu      sync.Mutex
	chunks  []docent.Chunk
	err     error
	release chan struct{}
	scans   atomic.Int32
}

func (l *loader) set(chunks []docent.Chunk, err error, release chan struct{}) {
	l.mu.Lock()
	l.chunks, l.err, l.release = chunks, err, release
	l.mu.Unlock()
}

func (l *loader) Scan(ctx context.Context, fn func(docent.Chunk) error) error {
	l.scans.Add(1)
	l.mu.Lock()
	chunks, err, release := l.chunks, l.err, l.release
	l.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// waitFor polls cond until it holds, failing after a few seconds: it
// waits on the background rebuild, it asserts nothing by itself.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCorpusStats(t *testing.T) {
	ctx := context.Background()
	n := func(s *CorpusStats) int {
		c, err := s.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.N()
	}
	t.Run("built on first use and kept", func(t *testing.T) {
		src := &loader{}
		src.set(spellingChunks[:2], nil, nil)
		s := NewCorpusStats(src)
		if src.scans.Load() != 0 {
			t.Fatal("built before first use")
		}
		if n(s) != 2 || n(s) != 2 || src.scans.Load() != 1 {
			t.Errorf("scans %d, want one build", src.scans.Load())
		}
	})
	t.Run("rebuilt after Invalidate, the old served meanwhile", func(t *testing.T) {
		src := &loader{}
		src.set(spellingChunks[:2], nil, nil)
		s := NewCorpusStats(src)
		n(s)
		release := make(chan struct{})
		src.set(spellingChunks, nil, release)
		s.Invalidate()
		if got := n(s); got != 2 {
			t.Errorf("during the rebuild N = %d, want the previous 2", got)
		}
		waitFor(t, "the rebuild to start", func() bool { return src.scans.Load() == 2 })
		if got := n(s); got != 2 || src.scans.Load() != 2 {
			t.Errorf("N %d scans %d while one rebuild runs, want 2 and no second rebuild", got, src.scans.Load())
		}
		close(release)
		waitFor(t, "the rebuilt statistics", func() bool { return n(s) == len(spellingChunks) })
	})
	t.Run("a failed rebuild keeps the old and retries", func(t *testing.T) {
		src := &loader{}
		src.set(spellingChunks[:2], nil, nil)
		s := NewCorpusStats(src)
		n(s)
		src.set(nil, errors.New("index closed"), nil)
		s.Invalidate()
		waitFor(t, "a retry after the failed rebuild", func() bool { return n(s) == 2 && src.scans.Load() >= 3 })
		src.set(spellingChunks, nil, nil)
		waitFor(t, "a successful rebuild", func() bool { return n(s) == len(spellingChunks) })
	})
	t.Run("the first build's error is returned", func(t *testing.T) {
		src := &loader{}
		src.set(nil, errors.New("index closed"), nil)
		_, err := NewCorpusStats(src).Get(ctx)
		if err == nil || !strings.Contains(err.Error(), "corpus statistics: index closed") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("fixed statistics never rebuild", func(t *testing.T) {
		c := NewCorpus(spellingChunks[:1])
		s := FixedCorpus(c)
		s.Invalidate()
		if got, err := s.Get(ctx); got != c || err != nil {
			t.Errorf("Get = %p, %v; want the fixed corpus", got, err)
		}
	})
	t.Run("nil statistics", func(t *testing.T) {
		var s *CorpusStats
		s.Invalidate()
		if c, err := s.Get(ctx); c != nil || err != nil {
			t.Errorf("Get = %v, %v", c, err)
		}
	})
	t.Run("concurrent first use builds one corpus", func(t *testing.T) {
		src := &loader{}
		src.set(spellingChunks, nil, nil)
		s := NewCorpusStats(src)
		var wg sync.WaitGroup
		got := make([]*Corpus, 8)
		for i := range got {
			wg.Go(func() { got[i], _ = s.Get(ctx) })
		}
		wg.Wait()
		for _, c := range got {
			if c != got[0] {
				t.Fatal("concurrent first uses saw different statistics")
			}
		}
	})
}
