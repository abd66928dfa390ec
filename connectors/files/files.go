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
	name string
	fsys fs.FS
	opts Options
}

var _ connectors.Source = (*Source)(nil)

// New returns a source named name over fsys. Invalid glob patterns are
// reported by List.
func New(name string, fsys fs.FS, opts Options) *Source {
	if opts.MaxBytes == 0 {
		opts.MaxBytes = connectors.DefaultMaxBytes
	}
	return &Source{name: name, fsys: fsys, opts: opts}
}

// Name returns the configured source name.
func (s *Source) Name() string { return s.name }

// List hands over every matching file, as it walks the file system: each
// listing is complete. Only regular files are read: a matching symbolic
// link, named pipe, device or socket goes to Listing.Failed (an error
// wrapping connectors.ErrNotRegular), so the run names it. Each document has ID "<name>:<path>", its front
// matter metadata (see connectors.ParseMarkdown) and UpdatedAt from the
// front matter "updated" date, else the file's modification time (zero for
// an embed.FS, which records none). Binary, oversized and malformed files,
// and files that cannot be read, go to Listing.Failed; the others still
// come through. The returned cursor is a hash of every listed path and its
// content, so it changes exactly when the listing does; the cursor passed
// in is ignored. List returns an error for invalid patterns, a root folder
// that cannot be read, a cancelled context, or an error from l.
func (s *Source) List(ctx context.Context, _ string, l connectors.Listing) (connectors.Listed, error) {
	if err := connectors.ValidatePatterns(s.opts.Include); err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: include: %w", s.name, err)
	}
	if err := connectors.ValidatePatterns(s.opts.Exclude); err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: exclude: %w", s.name, err)
	}
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
		doc, content, err := s.read(p, d)
		if err != nil {
			fmt.Fprintf(sum, "failed %q %q\n", p, err.Error())
			return l.Failed(ctx, s.id(p), err)
		}
		h := sha256.Sum256(content)
		fmt.Fprintf(sum, "doc %q %x\n", p, h)
		return l.Document(ctx, doc)
	})
	if err != nil {
		return connectors.Listed{}, fmt.Errorf("files: source %q: %w", s.name, err)
	}
	return connectors.Listed{Cursor: hex.EncodeToString(sum.Sum(nil))[:32], Complete: true}, nil
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
	md, err := connectors.ParseMarkdown(p, content)
	if err != nil {
		return docent.Document{}, nil, err
	}
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
	}
	if doc.Space == "" {
		doc.Space = s.opts.Space
	}
	if doc.UpdatedAt.IsZero() {
		doc.UpdatedAt = info.ModTime() // zero for embed.FS
	}
	return doc, content, nil
}
