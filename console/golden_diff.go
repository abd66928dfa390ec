package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/templates"
)

// showGoldenDiff compares two runs (?a=&b=) question by question: which
// got better or worse, and what ranked instead.
func (h *handler) showGoldenDiff(w http.ResponseWriter, r *http.Request) {
	ids := [2]int64{}
	for i, k := range []string{"a", "b"} {
		id, err := strconv.ParseInt(r.URL.Query().Get(k), 10, 64)
		if err != nil || id <= 0 {
			h.badRequest(w, r, "Pick two runs to compare.")
			return
		}
		ids[i] = id
	}
	var views [2]templates.GoldenRunView
	var rows [2][]docent.GoldenRunRow
	for i, id := range ids {
		run, err := h.store.GoldenRunByID(r.Context(), id)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		if views[i], err = runView(run); err != nil {
			h.serverError(w, r, err)
			return
		}
		if rows[i], err = h.store.GoldenRunRows(r.Context(), id); err != nil {
			h.serverError(w, r, err)
			return
		}
	}
	runs, err := h.store.ListGoldenRuns(r.Context(), 50)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p := templates.GoldenDiff{Meta: h.meta(r, fmt.Sprintf("Runs #%d → #%d", ids[0], ids[1]), "golden"),
		A: views[0], B: views[1], Runs: runs, OnlyChanged: r.URL.Query().Get("changed") == "1",
		ConfigDiff: configDiff(views[0].Run.Config, views[1].Run.Config)}
	for _, d := range diffRows(rows[0], rows[1]) {
		switch d.Change {
		case "better":
			p.Better++
		case "worse":
			p.Worse++
		case "same":
			p.Same++
		}
		if !p.OnlyChanged || d.Change != "same" {
			p.Rows = append(p.Rows, d)
		}
	}
	h.render(w, r, templates.GoldenDiffPage(p))
}

// diffRows pairs the rows of two runs by question ID, in b's order then
// a's questions b lacks, and says whether each got better or worse: a
// pass beats a fail; between equals, a better first rank wins. A
// question only in b is "new", one only in a "dropped".
func diffRows(a, b []docent.GoldenRunRow) []templates.DiffRow {
	byID := map[string]*docent.GoldenRunRow{}
	for i := range a {
		byID[a[i].QuestionID] = &a[i]
	}
	var out []templates.DiffRow
	seen := map[string]bool{}
	for i := range b {
		rb := &b[i]
		seen[rb.QuestionID] = true
		d := templates.DiffRow{ID: rb.QuestionID, Question: rb.Question, Kind: rb.Kind, A: byID[rb.QuestionID], B: rb}
		d.Change = change(d.A, d.B)
		out = append(out, d)
	}
	for i := range a {
		if !seen[a[i].QuestionID] {
			out = append(out, templates.DiffRow{ID: a[i].QuestionID, Question: a[i].Question, Kind: a[i].Kind, A: &a[i], Change: "dropped"})
		}
	}
	return out
}

func change(a, b *docent.GoldenRunRow) string {
	switch {
	case a == nil:
		return "new"
	case b.Pass && !a.Pass:
		return "better"
	case a.Pass && !b.Pass:
		return "worse"
	}
	ra, rb := rankOrInf(a.FirstRank), rankOrInf(b.FirstRank)
	switch {
	case rb < ra:
		return "better"
	case rb > ra:
		return "worse"
	}
	return "same"
}

// configDiff is the line diff of two runs' configurations (sergi/go-diff
// in line mode), each changed line with two lines of context; nil when
// they are the same.
func configDiff(a, b string) []templates.DiffLine {
	if a == b {
		return nil
	}
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var all []templates.DiffLine
	for _, d := range diffs {
		op := map[diffmatchpatch.Operation]string{diffmatchpatch.DiffDelete: "-", diffmatchpatch.DiffInsert: "+", diffmatchpatch.DiffEqual: " "}[d.Type]
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				all = append(all, templates.DiffLine{Op: op, Text: strings.TrimSuffix(l, "\n")})
			}
		}
	}
	const context = 2
	var out []templates.DiffLine
	last := -1
	for i, l := range all {
		near := false
		for j := max(0, i-context); j <= min(len(all)-1, i+context); j++ {
			near = near || all[j].Op != " "
		}
		if !near {
			continue
		}
		if last >= 0 && i > last+1 {
			out = append(out, templates.DiffLine{Op: "…"})
		}
		out = append(out, l)
		last = i
	}
	return out
}

func rankOrInf(r int) int {
	if r == 0 {
		return 1 << 30
	}
	return r
}
