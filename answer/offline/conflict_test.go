package offline

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/search"
)

func TestAmounts(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"A locker costs $10 per month; a shelf €4.50.", []string{"$10 per month", "€4.50"}},
		{"Dues of 1,200 per year", []string{"1200 per year"}},
		{"Cool 20 minutes, 2 hours, or 3 business days.", []string{"2 hour", "20 minute", "3 business day"}},
		{"Members get 15% off, or 20 percent.", []string{"15%", "20%"}},
		{"A 5k budget.", []string{"5 k"}},
		{"Three nights: 3 nights.", []string{"3 night"}},
		{"Error LZ-30 since 2025-03-04, bench b12, in 2024.", nil},
		{"A 4kg spool.", nil},
		{"In 2024 it cost $2024.", []string{"$2024"}},
		{"Room 4 upstairs", []string{"4"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			for a := range search.Amounts(tt.in) {
				got = append(got, a)
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("amounts = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStatesAmount(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"A locker costs $10.", true},
		{"Cool it 20 minutes.", true},
		{"Members get 15% off.", true},
		{"Bench 12 is free.", false}, // a bare number may be a code
		{"No numbers here.", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := statesAmount(tt.text); got != tt.want {
				t.Errorf("statesAmount = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSimilarHeadings(t *testing.T) {
	tests := []struct {
		name string
		a, b docent.Chunk
		want bool
	}{
		{"a version with a year in its title", wkDues, wkDuesOld, true},
		{"the same document", wkDues, wkDues, false},
		{"another topic", wkDues, wkLockers, false},
		{"the same title, another section", wkLaserBooking,
			docent.Chunk{DocID: "shop/laser-2.md", Title: "Laser cutter", Section: []string{"Lens care and cleaning"}}, false},
		{"no headings", docent.Chunk{DocID: "a"}, docent.Chunk{DocID: "b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := search.SimilarHeadings(tt.a, tt.b); got != tt.want {
				t.Errorf("similarHeadings = %v, want %v (%v vs %v)", got, tt.want, search.HeadingTerms(tt.a), search.HeadingTerms(tt.b))
			}
		})
	}
	if h := search.HeadingTerms(wkDuesOld); h["2022"] || !h["due"] || !h["rate"] {
		t.Errorf("HeadingTerms = %v, want the words without the year", h)
	}
}

func TestVersions(t *testing.T) {
	versions := func(a, b docent.Chunk) (bool, []string, []string) {
		if !search.SimilarHeadings(a, b) {
			return false, nil, nil
		}
		aa, ab := search.Amounts(a.Text), search.Amounts(b.Text)
		return true, search.Minus(aa, ab), search.Minus(ab, aa)
	}
	similar, onlyA, onlyB := versions(wkDues, wkDuesOld)
	if !similar || !slices.Equal(onlyA, []string{"$45", "$90"}) || !slices.Equal(onlyB, []string{"$35", "$80"}) {
		t.Errorf("Versions = %v %q %q", similar, onlyA, onlyB)
	}
	if similar, a, b := versions(wkDues, wkLockers); similar || a != nil || b != nil {
		t.Errorf("Versions of two topics = %v %q %q", similar, a, b)
	}
}

func TestConflicts(t *testing.T) {
	corp := wikiCorpus(wiki...)
	guestOld := wikiPage("guests-2019", "members/guests-2019.md", "Guest policy (2019)", []string{"Bringing a guest"}, "2019-01-01", 0,
		"Members may bring 3 guests per visit. Sign your guest in on the front desk tablet.")
	tests := []struct {
		name, question string
		a, b           docent.Chunk
		want           bool
		onlyA, onlyB   []string
	}{
		{"versions that disagree on what was asked", "how much are the studio dues", wkDues, wkDuesOld, true,
			[]string{"$90"}, []string{"$80"}},
		{"they agree on what was asked", "how much are the student dues", wkDues, wkDuesOld, false, nil, nil},
		{"the units that answer state no amount the other lacks", "when are dues charged", wkDues, wkDuesOld, false, nil, nil},
		{"other topics", "how much are the studio dues", wkDues, wkLockers, false, nil, nil},
		{"a number word is no amount", "how many guests may a member bring", wkGuests, guestOld, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := analyzedQuestion(t, tt.question, corp)
			got, onlyA, onlyB := conflicts(tt.a, tt.b, q.sc)
			if got != tt.want || !slices.Equal(onlyA, tt.onlyA) || !slices.Equal(onlyB, tt.onlyB) {
				t.Errorf("conflicts = %v %q %q, want %v %q %q", got, onlyA, onlyB, tt.want, tt.onlyA, tt.onlyB)
			}
		})
	}
}

func TestAnsweringUnits(t *testing.T) {
	corp := wikiCorpus(wiki...)
	q := analyzedQuestion(t, "how much are the studio dues", corp)
	var got []string
	for _, u := range answeringUnits(wkDues, q.sc) {
		got = append(got, u.Text)
	}
	// Every row states an amount; only those that cover the question as
	// well as the best one (within keepRatio) answer it.
	if !slices.Contains(got, "Studio — Monthly dues: $90; Door hours: all day") || slices.Contains(got, "Dues are charged on the first day of each month.") {
		t.Errorf("answering units %q", got)
	}
}

func TestDetectConflict(t *testing.T) {
	corp := wikiCorpus(wiki...)
	q := analyzedQuestion(t, "how much are the studio dues", corp)
	src := func(n int, c docent.Chunk) answer.Source { return answer.Source{N: n, Hit: docent.Hit{Chunk: c}} }
	tests := []struct {
		name         string
		srcs         []answer.Source
		lead         map[int]bool
		newer, older int
	}{
		{"newer first", []answer.Source{src(1, wkDues), src(2, wkDuesOld)}, map[int]bool{1: true}, 1, 2},
		{"the older ranked first", []answer.Source{src(1, wkDuesOld), src(2, wkLockers), src(3, wkDues)}, map[int]bool{1: true}, 3, 1},
		{"neither is a lead source", []answer.Source{src(1, wkLockers), src(2, wkDues), src(3, wkDuesOld)}, map[int]bool{1: true}, 0, 0},
		{"a part's lead source", []answer.Source{src(1, wkLockers), src(2, wkDues), src(3, wkDuesOld)}, map[int]bool{1: true, 2: true}, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, note := detectConflict(tt.srcs, q.sc, tt.lead)
			if tt.newer == 0 {
				if c != nil || note != "" {
					t.Errorf("conflict %+v %q, want none", c, note)
				}
				return
			}
			if c == nil || c.Newer != tt.newer || c.Older != tt.older {
				t.Fatalf("conflict %+v, want newer %d older %d", c, tt.newer, tt.older)
			}
			if !slices.Equal(c.Terms, []string{"due", "membership", "month", "rate"}) {
				t.Errorf("terms %v", c.Terms)
			}
			want := "newer members/dues.md (updated 2025-09-01) says $90; older members/dues-2022.md (updated 2022-02-01) says $80"
			if note != want {
				t.Errorf("note %q, want %q", note, want)
			}
		})
	}
	// Pages of one day are of one time: the hours between them (a
	// checkout's file times, one edit touching two pages) make neither
	// the newer, so the note and the reply call neither more recent.
	for _, tt := range []struct {
		name   string
		a, b   time.Duration // offsets from one day's midnight
		dated  bool
		newer  int
		prefix string
	}{
		{"the same time: the better ranked first, neither newer", 0, 0, false, 1, "members/dues-2022.md (updated 2020-09-01)"},
		{"hours apart on one day: neither newer", 2 * time.Hour, 20 * time.Hour, false, 1, "members/dues-2022.md (updated 2020-09-01)"},
		{"a day apart: the later is newer", 48 * time.Hour, 20 * time.Hour, true, 2, "newer members/dues.md (updated 2020-09-03)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := wkDues, wkDuesOld
			day := time.Date(2020, 9, 1, 0, 0, 0, 0, time.UTC)
			a.UpdatedAt, b.UpdatedAt = day.Add(tt.a), day.Add(tt.b)
			c, note := detectConflict([]answer.Source{src(1, b), src(2, a)}, q.sc, map[int]bool{1: true})
			if c == nil || c.Newer != tt.newer || c.Dated != tt.dated || !strings.HasPrefix(note, tt.prefix) {
				t.Errorf("conflict %+v %q, want newer %d dated %v, note starting %q", c, note, tt.newer, tt.dated, tt.prefix)
			}
		})
	}
	if got := dateOf(docent.Chunk{}); got != "date unknown" {
		t.Errorf("dateOf = %q", got)
	}
}
