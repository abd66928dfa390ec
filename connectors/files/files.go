// Package files is a documentation source over a folder or any fs.FS
// (os.DirFS, an embed.FS such as the bundled example handbook). Every sync
// is a complete listing, streamed as the folder is walked: a folder has no
// change history to be incremental on.
package files

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
)

// Options configure a files source.
type Options struct {
	// Include are doublestar globs of the slash paths to index;
	// connectors.DefaultInclude (markdown, MDX, reST, text) when empty.
	Include []string
	// Exclude are doublestar globs of paths to skip even if included.
	Exclude []string
	// WebURL is a template for document URLs; "{path}" is replaced by the
	// file's slash path. Empty leaves Document.URL empty.
	WebURL string
	// MaxBytes is the largest file read; connectors.DefaultMaxBytes when 0,
	// no limit when negative. Larger files are reported to Listing.Failed.
	MaxBytes int
	// Space is the Document.Space of every document whose front matter does
	// not name one.
	Space string
}

// Source lists the text files of a file system as documents.
type Source struct {
	name    string
	fsys    fs.FS
	opts    Options
	include connectors.Includer
}

var _ connectors.Source = (*Source)(nil)

// New returns a source named name over fsys. Invalid glob patterns are
// reported by List.
func New(name string, fsys fs.FS, opts Options) *Source {
	if opts.MaxBytes == 0 {
		opts.MaxBytes = connectors.DefaultMaxBytes
	}
	return &Source{name: name, fsys: fsys, opts: opts, include: connectors.FSIncluder(fsys, opts.MaxBytes)}
}

// Name returns the configured source name.
func (s *Source) Name() string { return s.name }

// List hands over every matching file: each listing is complete. Each
// document has ID "<name>:<path>", its front matter metadata and its
// normalised body (see connectors.ParseMarkdownWith: static-site markup
// removed, includes expanded from files of the folder), and UpdatedAt
// from the front matter "updated" date, else the file's modification time
// (zero for an embed.FS, which records none). A file that other documents
// include whole (connectors.WholeIncludes) is a fragment: it is not handed
// over on its own (connectors.ReportFragments), its text is indexed in the
// pages that include it. Binary and oversized files, and files that cannot
// be read, go to Listing.Failed; the others still come through. The
// returned cursor is a hash of every listed path and its normalised body,
// so it changes exactly when the listing does; the cursor passed in is
// ignored. List returns an error for invalid patterns, a root folder that
// cannot be read, a cancelled context, or an error from l. Only regular
// files are read: a matching symbolic link, named pipe, device or socket
// goes to Listing.Failed (an error wrapping connectors.ErrNotRegular), so
// the run names it.
func (s *Source) List(ctx context.Context, _ string, l connectors.Listing) (connectors.Listed, error) {
	if err := connectors.ValidatePatterns(s.opts.Include); err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: include: %w", s.name, err)
	}
	if err := connectors.ValidatePatterns(s.opts.Exclude); err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: exclude: %w", s.name, err)
	}
	// The walk names the documents; the fragments are known only once
	// every document's includes are, so documents are read after it.
	type entry struct {
		path string
		d    fs.DirEntry
	}
	var entries []entry
	sum := sha256.New()
	err := fs.WalkDir(s.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			if err := l.Failed(ctx, s.id(p), fmt.Errorf("cannot read: %w", err)); err != nil {
				return err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir // .git, .github and friends
			}
			return nil
		}
		if !connectors.MatchPath(p, s.opts.Include, s.opts.Exclude) {
			return nil
		}
		if kind := NotRegular(d.Type()); kind != "" {
			// A link, pipe or device is never read, and named in the run.
			err := fmt.Errorf("%w: %s, not read", connectors.ErrNotRegular, kind)
			fmt.Fprintf(sum, "failed %q %q\n", p, err.Error())
			return l.Failed(ctx, s.id(p), err)
		}
		entries = append(entries, entry{p, d})
		return nil
	})
	if err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: %w", s.name, err)
	}
	docs := make(map[string]bool, len(entries))
	for _, e := range entries {
		docs[e.path] = true
	}
	fragments, err := s.fragments(ctx, docs)
	if err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: %w", s.name, err)
	}
	var left []string
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return connectors.Listed{}, fmt.Errorf("files: source %q: %w", s.name, err)
		}
		if fragments[e.path] {
			fmt.Fprintf(sum, "fragment %q\n", e.path)
			left = append(left, s.id(e.path))
			continue
		}
		doc, _, err := s.read(e.path, e.d)
		if err != nil {
			fmt.Fprintf(sum, "failed %q %q\n", e.path, err.Error())
			if err := l.Failed(ctx, s.id(e.path), err); err != nil {
				return connectors.Listed{}, fmt.Errorf("files: source %q: %w", s.name, err)
			}
			continue
		}
		h := sha256.Sum256([]byte(doc.Body))
		fmt.Fprintf(sum, "doc %q %x\n", e.path, h)
		if err := l.Document(ctx, doc); err != nil {
			return connectors.Listed{}, fmt.Errorf("files: source %q: %w", s.name, err)
		}
	}
	connectors.ReportFragments(l, left...)
	return connectors.Listed{Cursor: hex.EncodeToString(sum.Sum(nil))[:32], Complete: true}, nil
}

// fragments returns the documents that other documents include whole. A
// file that cannot be read here is not a fragment: reading it as a
// document reports why.
func (s *Source) fragments(ctx context.Context, docs map[string]bool) (map[string]bool, error) {
	out := map[string]bool{}
	for p := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		content, err := s.include(p)
		if err != nil {
			continue
		}
		for _, t := range connectors.WholeIncludes(p, content, func(name string) bool { return docs[name] }) {
			if t != p {
				out[t] = true
			}
		}
	}
	return out, nil
}

func (s *Source) id(p string) string { return s.name + ":" + p }

// read loads and parses one file; its error message is shown to admins.
func (s *Source) read(p string, d fs.DirEntry) (docent.Document, []byte, error) {
	info, err := d.Info()
	if err != nil {
		return docent.Document{}, nil, fmt.Errorf("cannot stat: %w", err)
	}
	if s.opts.MaxBytes > 0 && info.Size() > int64(s.opts.MaxBytes) {
		return docent.Document{}, nil, fmt.Errorf("%w: %d bytes, over the limit of %d bytes",
			connectors.ErrTooLarge, info.Size(), s.opts.MaxBytes)
	}
	f, err := s.fsys.Open(p)
	if err != nil {
		return docent.Document{}, nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	// The file's own mode, not the name's: what was opened is what is read.
	if st, err := f.Stat(); err != nil {
		return docent.Document{}, nil, fmt.Errorf("cannot stat: %w", err)
	} else if kind := NotRegular(st.Mode()); kind != "" || st.IsDir() {
		return docent.Document{}, nil, fmt.Errorf("%w: %s, not read", connectors.ErrNotRegular, cmp.Or(kind, "folder"))
	}
	var r io.Reader = f
	if s.opts.MaxBytes > 0 {
		r = io.LimitReader(f, int64(s.opts.MaxBytes)+1) // the file may grow after Stat
	}
	content, err := io.ReadAll(r)
	if err != nil {
		return docent.Document{}, nil, fmt.Errorf("cannot read: %w", err)
	}
	if err := connectors.CheckText(content, s.opts.MaxBytes); err != nil {
		return docent.Document{}, nil, err
	}
	md := connectors.ParseMarkdownWith(p, content, s.include)
	doc := docent.Document{
		ID:        s.id(p),
		Source:    s.name,
		Path:      p,
		URL:       connectors.ExpandURL(s.opts.WebURL, map[string]string{"path": p}),
		Title:     md.Title,
		Space:     md.Space,
		Labels:    md.Labels,
		Owner:     md.Owner,
		UpdatedAt: md.Updated,
		Body:      md.Body,

		Normalized: md.Normalized,
	}
	if doc.Space == "" {
		doc.Space = s.opts.Space
	}
	if doc.UpdatedAt.IsZero() {
		doc.UpdatedAt = info.ModTime() // zero for embed.FS
	}
	return doc, content, nil
}
