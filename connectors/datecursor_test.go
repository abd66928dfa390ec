package connectors_test

import (
	"context"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
)

func TestDateCursor(t *testing.T) {
	c := connectors.DateCursor{Scope: connectors.Fingerprint([]string{"cloud"}, []string{"ENG", "HR"}),
		Since: time.Date(2026, 3, 2, 9, 30, 0, 123, time.FixedZone("CET", 3600))}
	got, ok := connectors.ParseDateCursor(c.String())
	if !ok || got.Scope != c.Scope || !got.Since.Equal(c.Since) {
		t.Errorf("round trip of %q = %+v, %v", c, got, ok)
	}
	for _, bad := range []string{"", "42", "v1;scope=x", "v2;scope=x;since=2026-03-02T09:30:00Z", "v1;scope=x;since=yesterday"} {
		if _, ok := connectors.ParseDateCursor(bad); ok {
			t.Errorf("ParseDateCursor(%q) accepted it", bad)
		}
	}
	same := connectors.Fingerprint([]string{"cloud"}, []string{"HR", "ENG"})
	other := connectors.Fingerprint([]string{"cloud"}, []string{"ENG"}, []string{"HR"})
	if same != c.Scope || other == c.Scope || connectors.Fingerprint([]string{"datacenter"}, []string{"ENG", "HR"}) == c.Scope {
		t.Errorf("fingerprints: list order must not matter, lists and values must")
	}
}

func TestPresenter(t *testing.T) {
	var col countingListing
	p := connectors.NewPresenter(&col)
	ctx := context.Background()
	for i := range 1234 {
		if err := p.Add(ctx, "hb:"+string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if col.calls != 3 || col.ids != 1234 {
		t.Errorf("Present called %d times with %d IDs, want 3 calls (500, 500, 234) and 1234", col.calls, col.ids)
	}
}

type countingListing struct {
	connectors.Listing
	calls, ids int
}

func (c *countingListing) Present(_ context.Context, ids ...string) error {
	c.calls++
	c.ids += len(ids)
	return nil
}
