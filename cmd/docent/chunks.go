package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/docent-hq/docent"
)

// chunkJSON is one chunk as `docent chunks --json` prints it.
type chunkJSON struct {
	ID      string   `json:"id"`
	DocID   string   `json:"doc_id"`
	Title   string   `json:"title"`
	Section []string `json:"section"`
	URL     string   `json:"url"`
	Text    string   `json:"text"`
}

// Chunks prints the chunks of the index as they are stored: every chunk,
// those of one source or document, or a random sample of them, as text or
// one JSON object per line. It reads the index and changes nothing.
func (m *Main) Chunks(ctx context.Context, args []string) error {
	fl := m.flagSet("chunks")
	source := fl.String("source", "", "only the chunks of this source")
	doc := fl.String("doc", "", "only the chunks of this document (its ID, or its path in its source)")
	sample := fl.Int("sample", 0, "print N chunks picked at random (with --seed, the same N every time)")
	seed := fl.Uint64("seed", 0, "seed of --sample (default: a new one, printed on stderr)")
	asJSON := fl.Bool("json", false, "print one JSON object per chunk")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("chunks: unexpected argument %q: %w", rest[0], errUsage)
	}
	if *sample < 0 {
		return fmt.Errorf("chunks: --sample must be positive: %w", errUsage)
	}
	seedSet := false
	fl.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
	if seedSet && *sample == 0 {
		return fmt.Errorf("chunks: --seed needs --sample N: %w", errUsage)
	}
	if err := m.Open(ctx); err != nil {
		return err
	}
	if *source != "" {
		if _, err := m.source(*source); err != nil {
			return err
		}
	}
	match := func(c docent.Chunk) bool {
		if *source != "" && c.Source != *source {
			return false
		}
		if *doc != "" && c.DocID != *doc && c.DocID != c.Source+":"+*doc {
			return false
		}
		return true
	}
	print := func(c docent.Chunk) error {
		if *asJSON {
			return writeChunkJSON(m.Stdout, c)
		}
		writeChunkText(m.Stdout, c)
		return nil
	}
	if *sample == 0 {
		n := 0
		err := m.Index.Scan(ctx, func(c docent.Chunk) error {
			if !match(c) {
				return nil
			}
			n++
			return print(c)
		})
		if err != nil {
			return fmt.Errorf("chunks: %w", err)
		}
		if n == 0 && !*asJSON {
			fmt.Fprintln(m.Stderr, "no chunks match")
		}
		return nil
	}
	if !seedSet {
		*seed = uint64(time.Now().UnixNano())
		fmt.Fprintf(m.Stderr, "sample of %d, --seed %d\n", *sample, *seed)
	}
	picked, err := sampleChunks(ctx, m.Index.Scan, match, *sample, *seed)
	if err != nil {
		return fmt.Errorf("chunks: %w", err)
	}
	for _, c := range picked {
		if err := print(c); err != nil {
			return err
		}
	}
	return nil
}

// sampleChunks picks n of the chunks scan hands over that match, uniformly
// at random (reservoir sampling with a generator seeded by seed: the same
// index and seed give the same sample), in scan order.
func sampleChunks(ctx context.Context, scan func(context.Context, func(docent.Chunk) error) error,
	match func(docent.Chunk) bool, n int, seed uint64) ([]docent.Chunk, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6368756e6b73)) // "chunks"
	type slot struct {
		pos int
		c   docent.Chunk
	}
	var res []slot
	seen := 0
	err := scan(ctx, func(c docent.Chunk) error {
		if !match(c) {
			return nil
		}
		seen++
		if len(res) < n {
			res = append(res, slot{seen, c})
		} else if j := rng.IntN(seen); j < n {
			res[j] = slot{seen, c}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Scan order, so that the chunks of one document read together.
	for i := 1; i < len(res); i++ {
		for j := i; j > 0 && res[j].pos < res[j-1].pos; j-- {
			res[j], res[j-1] = res[j-1], res[j]
		}
	}
	out := make([]docent.Chunk, len(res))
	for i, s := range res {
		out[i] = s.c
	}
	return out, nil
}

func writeChunkJSON(w io.Writer, c docent.Chunk) error {
	section := c.Section
	if section == nil {
		section = []string{}
	}
	b, err := json.Marshal(chunkJSON{ID: c.ID, DocID: c.DocID, Title: c.Title, Section: section, URL: c.URL, Text: c.Text})
	if err != nil {
		return fmt.Errorf("chunks: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func writeChunkText(w io.Writer, c docent.Chunk) {
	fmt.Fprintf(w, "── %s  %s\n", c.ID, c.DocID)
	fmt.Fprintf(w, "title:   %s\n", c.Title)
	if len(c.Section) > 0 {
		fmt.Fprintf(w, "section: %s\n", strings.Join(c.Section, " > "))
	}
	if c.URL != "" {
		fmt.Fprintf(w, "url:     %s\n", c.URL)
	}
	fmt.Fprintf(w, "\n%s\n\n", strings.TrimRight(c.Text, "\n"))
}
