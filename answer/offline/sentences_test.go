package offline

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

// kilnPage holds every construct splitUnits reads: an in-chunk heading,
// a paragraph with markdown, a quote, two tables, a list with nested
// items and a continuation line, short and long code blocks, a rule and
// a sentence about the page.
var kilnPage = wikiPage("kiln-firing", "shop/kiln.md", "Ceramics kiln", []string{"Firing"}, "2025-01-01", 0,
	"## Loading shelves\n\nCheck the **shelves** for cracks. Read [the log](log.md) first. <b>Always</b> wear _gloves_.\n\n"+
		"> Ask a steward if in doubt.\n\n"+
		"| Cone | Temperature | Hold |\n|---|---|---|\n| 06 | 999 C | |\n| 6 | 1222 C | 10 min |\n\n"+
		"| Shelf | Size |\n|---|---|\n| Half | 30 cm |\n\n"+
		"- Bisque: the first firing\n  of raw clay.\n- Glaze — the second firing\n  - Load glazed pieces apart.\n  - Leave 1 cm between pieces.\n"+
		"- A very long label with six words: text\n\n"+
		"Start the controller with:\n\n```\nkilnctl start --cone 6\n```\n\n"+
		"Logs live here\n\n```\nkilnctl log\n```\n\n"+
		"Reset it with:\n\n```\na\nb\nc\nd\n```\n\n"+
		"---\n\nThis page describes the kiln.\n")

func TestSplitUnits(t *testing.T) {
	units := splitUnits(kilnPage)
	type want struct {
		text  string
		kind  unitKind
		group int
		para  int
		sub   bool
		key   string
		meta  bool
	}
	wants := []want{
		{text: "Check the shelves for cracks.", para: 1},
		{text: "Read the log first.", para: 1},
		{text: "Always wear gloves.", para: 1},
		{text: "Ask a steward if in doubt.", para: 2},
		{text: "06 — Temperature: 999 C", kind: kindRow, group: 1, key: "06"},
		{text: "6 — Temperature: 1222 C; Hold: 10 min", kind: kindRow, group: 1, key: "6"},
		{text: "Half: 30 cm", kind: kindRow, group: 2, key: "Half"},
		{text: "Bisque: the first firing of raw clay.", kind: kindItem, group: 3, key: "Bisque"},
		{text: "Glaze — the second firing", kind: kindItem, group: 3, key: "Glaze"},
		{text: "Load glazed pieces apart.", kind: kindItem, group: 3, sub: true},
		{text: "Leave 1 cm between pieces.", kind: kindItem, group: 3, sub: true},
		{text: "A very long label with six words: text", kind: kindItem, group: 3},
		{text: "Start the controller with: `kilnctl start --cone 6`", para: 3},
		{text: "Logs live here", para: 4},
		{text: "Reset it with:", para: 5},
		{text: "This page describes the kiln.", para: 7, meta: true},
	}
	if got := unitTexts(units); len(got) != len(wants) {
		t.Fatalf("units:\n%s", strings.Join(got, "\n"))
	}
	for i, w := range wants {
		u := units[i]
		t.Run(fmt.Sprintf("%02d %s", i, w.text), func(t *testing.T) {
			if u.display() != w.text || u.Kind != w.kind || u.Group != w.group || u.Para != w.para || u.Sub != w.sub ||
				u.Key != w.key || u.meta != w.meta || u.Ord != i {
				t.Errorf("got %q kind %d group %d para %d sub %v key %q meta %v ord %d\nwant %+v",
					u.display(), u.Kind, u.Group, u.Para, u.Sub, u.Key, u.meta, u.Ord, w)
			}
		})
	}
	t.Run("title line skipped, title words are title", func(t *testing.T) {
		for _, u := range units {
			if strings.Contains(u.Text, "Ceramics kiln >") {
				t.Errorf("unit %q holds the title line", u.Text)
			}
		}
		if !units[0].Title["ceram"] || units[0].Terms["ceram"] {
			t.Errorf("title %v terms %v", units[0].Title, units[0].Terms)
		}
	})
	t.Run("section path and in-chunk heading are context", func(t *testing.T) {
		if !units[0].Context["fire"] || !units[0].Context["load"] || units[0].Terms["load"] {
			t.Errorf("context %v terms %v", units[0].Context, units[0].Terms)
		}
	})
	t.Run("a table header is context of its rows", func(t *testing.T) {
		if !units[4].Context["temperatur"] || !units[6].Context["size"] || units[6].Context["temperatur"] {
			t.Errorf("row contexts %v / %v", units[4].Context, units[6].Context)
		}
	})
	t.Run("a short code block joins the sentence that introduces it", func(t *testing.T) {
		if !slices.Equal(units[12].Code, []string{"kilnctl start --cone 6"}) || !units[12].Terms["kilnctl"] || units[12].Text != "Start the controller with:" {
			t.Errorf("code %q terms %v text %q", units[12].Code, units[12].Terms, units[12].Text)
		}
		if len(units[13].Code) != 0 {
			t.Errorf("code %q joined a sentence that does not end in ':'", units[13].Code)
		}
		if len(units[14].Code) != 0 {
			t.Errorf("a %d-line block joined: %q (at most %d lines)", len(units[14].Code), units[14].Code, maxCodeLines)
		}
	})
}

func TestSplitUnitsNewGroups(t *testing.T) {
	c := wikiPage("g", "g.md", "Bench rules", nil, "", 0,
		"- Tidy up\n- Log out\n\nBetween the lists.\n\n- Wipe down\n\n## Other\n\n| A | B |\n|---|---|\n| x | 1 |\n\n| C | D |\n|---|---|\n| y | 2 |\n")
	units := splitUnits(c)
	var groups []int
	for _, u := range units {
		groups = append(groups, u.Group)
	}
	// A list, a sentence, a list, a table, a table: each list and table
	// its own group.
	if want := []int{1, 1, 0, 2, 3, 4}; !slices.Equal(groups, want) {
		t.Errorf("groups %v of %q, want %v", groups, unitTexts(units), want)
	}
}

func TestItemKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Public: anything on the website", "Public"},
		{"**Glaze** — the second firing", "Glaze"},
		{"Bisque - the first firing", "Bisque"},
		{"one two three four five: five words", "one two three four five"},
		{"one two three four five six: six words", ""},
		{"No label in this item", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := itemKey(tt.in); got != tt.want {
				t.Errorf("itemKey = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderRow(t *testing.T) {
	tests := []struct {
		name          string
		header, cells []string
		want          string
	}{
		{"one column", []string{"Plan"}, []string{"Studio"}, "Studio"},
		{"two columns", []string{"Plan", "Dues"}, []string{"Studio", "$90"}, "Studio: $90"},
		{"more columns named by the header", []string{"Plan", "Dues", "Hours"}, []string{"Studio", "$90", "all day"}, "Studio — Dues: $90; Hours: all day"},
		{"a cell past the header", []string{"Plan", "Dues"}, []string{"Studio", "$90", "note"}, "Studio — Dues: $90; note"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderRow(tt.header, tt.cells); got != tt.want {
				t.Errorf("renderRow = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCleanInline(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Read [the log](log.md) first.", "Read the log first."},
		{"![diagram](k.png) Shelves", "diagram Shelves"},
		{"<b>Always</b> wear gloves", "Always wear gloves"},
		{"**Never** cut __PVC__", "Never cut PVC"},
		{"wear _gloves_ and *goggles*", "wear gloves and goggles"},
		{"run `kilnctl log`   now", "run kilnctl log now"},
		// a placeholder is text, in code or not; an HTML tag in code is code
		{"set `kiln.<zone_name>.temp` or <your-zone>", "set kiln.<zone_name>.temp or <your-zone>"},
		{"write `<br>` for a break<br>here", "write <br> for a break here"},
		{"<span class=\"x\">hot</span> <img src=\"k.png\"/> kiln", "hot kiln"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := cleanInline(tt.in); got != tt.want {
				t.Errorf("cleanInline = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChunkCache(t *testing.T) {
	a := wikiPage("cache-1", "c.md", "Cache", nil, "", 0, "Kilns cool overnight.")
	if got := unitTexts(unitsOf(a)); !slices.Equal(got, []string{"Kilns cool overnight."}) {
		t.Fatalf("units %q", got)
	}
	if !termsOf(a)["kiln"] {
		t.Fatalf("terms %v", termsOf(a))
	}
	// The same ID with other content (a chunk edited in place) is split
	// again, not served from the cache.
	b := a
	b.Text = "Cache\n\nPrinters warm up fast."
	if got := unitTexts(unitsOf(b)); !slices.Equal(got, []string{"Printers warm up fast."}) {
		t.Errorf("edited chunk units %q", got)
	}
	if termsOf(b)["kiln"] || !termsOf(b)["printer"] {
		t.Errorf("edited chunk terms %v", termsOf(b))
	}
	// A chunk without an ID is split every time.
	c := docent.Chunk{Text: "Benches are shared."}
	if got := unitTexts(unitsOf(c)); !slices.Equal(got, []string{"Benches are shared."}) {
		t.Errorf("units without ID %q", got)
	}
	if cached(c) == cached(c) {
		t.Error("a chunk without ID was cached")
	}
	if cached(b) != cached(b) {
		t.Error("a chunk with an ID was not cached")
	}
}

func TestChunkCacheBounded(t *testing.T) {
	for i := range maxCachedChunks + 10 {
		cached(docent.Chunk{ID: fmt.Sprintf("bound-%d", i), Text: "x"})
	}
	chunkCache.Lock()
	n := len(chunkCache.m)
	chunkCache.Unlock()
	if n > maxCachedChunks {
		t.Errorf("cache holds %d entries, want at most %d", n, maxCachedChunks)
	}
}

// A sentence that introduces a code block and goes on after it, in lower
// case, is one unit: quoting the lead-in alone ("If the alarm sounds:")
// would restate the problem and leave out what to do.
func TestSplitUnitsSentenceAcrossCode(t *testing.T) {
	page := wikiPage("kiln-alarm", "shop/alarm.md", "Kiln alarm", []string{"Alarms"}, "2025-01-01", 0,
		"If the controller shows this:\n\n```text\nE42 overheat\nzone 2\nzone 3\nhold\n```\n\n"+
			"turn the kiln off and open the vent. Then tell a steward.\n\n"+
			"Start a firing with:\n\n```\nkilnctl start\n```\n\nand wait for the beep.\n\n"+
			"Check the log with:\n\n```\nkilnctl log\n```\n\nIt lists every firing.\n\n"+
			"Before you leave:\n\n- close the lid\n\n"+
			"The cone sets the peak heat. For example\n\n```\nkilnctl start --cone 6\n```\n\nwould mean 1,220 °C.\n\n"+
			"Logs rotate weekly\n\n```\nkilnctl log --all\n```\n\nKeep them a month.\n")
	got := unitTexts(splitUnits(page))
	want := []string{
		"If the controller shows this: turn the kiln off and open the vent.",
		"Then tell a steward.",
		"Start a firing with: `kilnctl start` and wait for the beep.",
		"Check the log with: `kilnctl log`",
		"It lists every firing.",
		"Before you leave:",
		"close the lid",
		"The cone sets the peak heat.",
		// an unfinished sentence that the block and the text after it finish
		"For example `kilnctl start --cone 6` would mean 1,220 °C.",
		// unfinished, but the text after the block starts anew
		"Logs rotate weekly",
		"Keep them a month.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("units:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, u := range splitUnits(page) {
		if strings.HasPrefix(u.Text, "If the controller") && !u.Terms["vent"] {
			t.Errorf("the continued sentence's words are not among its terms: %v", u.Terms)
		}
	}
}

func TestSplitUnitsLabelLines(t *testing.T) {
	// A paragraph that is one bold span and no sentence labels what
	// follows, as an admonition's or a content tab's title does once the
	// source's markdown is normalised: it is context, not a unit. A bold
	// sentence stays one, and a heading ends the label.
	page := wikiPage("kiln-fire", "shop/firing.md", "Kiln firing", []string{"Firing"}, "2025-01-01", 0,
		"**Bisque firing**\n\nLoad the shelves loosely.\n\n"+
			"**Glaze firing:**\n\nKeep pieces a finger apart.\n\n"+
			"**Never open a hot kiln.**\n\n"+
			"### Cooling\n\nWait a day.\n")
	units := splitUnits(page)
	got := unitTexts(units)
	want := []string{"Load the shelves loosely.", "Keep pieces a finger apart.", "Never open a hot kiln.", "Wait a day."}
	if !slices.Equal(got, want) {
		t.Fatalf("units:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	contexts := []struct {
		has, lacks string
	}{{"bisqu", "glaze"}, {"glaze", "bisqu"}, {"glaze", ""}, {"cool", "glaze"}}
	for i, c := range contexts {
		if !units[i].Context[c.has] || (c.lacks != "" && units[i].Context[c.lacks]) {
			t.Errorf("unit %q context %v: want %q, not %q", units[i].Text, units[i].Context, c.has, c.lacks)
		}
	}
}

func TestSplitUnitsLazyItemLines(t *testing.T) {
	// A list item's lines that follow it without indentation still belong
	// to it (CommonMark's lazy continuation); a blank line ends it.
	page := wikiPage("kiln-rules", "shop/rules.md", "Kiln rules", []string{"Loading"}, "2025-01-01", 0,
		"1. If a piece is glazed\nand its foot is not wiped,\nit stays off the shelf.\n"+
			"2. If a piece is wet\nit dries a day first.\n\nAsk a steward.\n")
	got := unitTexts(splitUnits(page))
	want := []string{
		"If a piece is glazed and its foot is not wiped, it stays off the shelf.",
		"If a piece is wet it dries a day first.",
		"Ask a steward.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("units:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
