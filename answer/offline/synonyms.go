package offline

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Synonyms are a deployment's own words for what its docs call otherwise
// ("PTO" for "paid time off", a product's old name for its new one):
// data, not code, read from the file answerer.synonyms names, plus the
// entries added from the console. The format is the one Solr and
// Elasticsearch read (synonyms.txt):
//
//	# a comment
//	pto, paid time off, vacation     # equivalent: each means the others
//	2fa, two-step => mfa             # one-way: the left side means the right
//
// A question phrase that matches an entry is rewritten into the words
// the docs hold: replaced when the docs never use it, extended when they
// do (see Standalone). A Synonyms is safe for concurrent use; Add makes
// an entry effective for questions asked from then on.
type Synonyms struct {
	mu    sync.RWMutex
	rules []synonymRule
}

// synonymRule says that each phrase of from means the phrases of to.
type synonymRule struct {
	from, to []string
}

// ParseSynonyms reads synonyms in the format above; name is used in
// errors, which give the line ("synonyms.txt:3: ...").
func ParseSynonyms(name string, r io.Reader) (*Synonyms, error) {
	s := &Synonyms{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := s.add(line); err != nil {
			return nil, fmt.Errorf("offline: synonyms: %s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("offline: synonyms: %s: %w", name, err)
	}
	return s, nil
}

// LoadSynonyms reads the synonyms file at path.
func LoadSynonyms(path string) (*Synonyms, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("offline: synonyms: %w", err)
	}
	defer f.Close()
	return ParseSynonyms(path, f)
}

// Add adds one entry in the file's format ("wfh => remote work").
func (s *Synonyms) Add(line string) error {
	if err := s.add(line); err != nil {
		return fmt.Errorf("offline: synonyms: %w", err)
	}
	return nil
}

func (s *Synonyms) add(line string) error {
	phrases := func(part string) []string {
		var out []string
		for _, p := range strings.Split(part, ",") {
			if p = normPhrase(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	var r synonymRule
	if left, right, ok := strings.Cut(line, "=>"); ok {
		r = synonymRule{from: phrases(left), to: phrases(right)}
		if len(r.from) == 0 || len(r.to) == 0 {
			return fmt.Errorf("%q: want phrases on both sides of =>", strings.TrimSpace(line))
		}
	} else {
		all := phrases(line)
		if len(all) < 2 {
			return fmt.Errorf("%q: want at least two phrases separated by commas, or a => b", strings.TrimSpace(line))
		}
		r = synonymRule{from: all, to: all}
	}
	s.mu.Lock()
	s.rules = append(s.rules, r)
	s.mu.Unlock()
	return nil
}

// Len returns the number of entries.
func (s *Synonyms) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.rules)
}

// meanings returns, for a phrase of the question (normalised), what it
// means by the entries: every other phrase of an equivalent entry, the
// right side of a one-way one.
func (s *Synonyms) meanings(phrase string) []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, r := range s.rules {
		for _, f := range r.from {
			if f != phrase {
				continue
			}
			for _, t := range r.to {
				if t != phrase {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// longest is the most words of any phrase on a left side.
func (s *Synonyms) longest() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, r := range s.rules {
		for _, f := range r.from {
			n = max(n, len(strings.Fields(f)))
		}
	}
	return n
}

// normPhrase lower-cases a phrase and folds its spaces.
func normPhrase(p string) string {
	return strings.Join(strings.Fields(strings.ToLower(p)), " ")
}

// Merge adds o's entries to s.
func (s *Synonyms) Merge(o *Synonyms) {
	if o == nil || s == o {
		return
	}
	o.mu.RLock()
	rules := append([]synonymRule(nil), o.rules...)
	o.mu.RUnlock()
	s.mu.Lock()
	s.rules = append(s.rules, rules...)
	s.mu.Unlock()
}
