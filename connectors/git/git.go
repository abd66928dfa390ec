// Package git is a documentation source over a Git repository, read with
// go-git (no git binary needed for local and HTTP(S) repositories).
//
// A remote repository is cloned (bare) into the data directory on the first
// sync and fetched on every later one; a local repository is opened in
// place. Documents are always read from the branch's commit tree, never from
// a worktree, so uncommitted edits are not indexed.
//
// Syncs are incremental: the cursor records the commit last synced, and the
// next sync diffs that commit's tree against the branch head (with rename
// detection), re-reading only the files that changed.
package git

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/internal/private"
	"github.com/docent-hq/docent/internal/redact"
)

// Auth is HTTP(S) basic authentication for a remote repository. With a
// personal access token, Token is the token and Username may stay empty.
type Auth struct {
	// Username is the basic-auth user name; "x-access-token" when empty
	// (GitHub's convention; GitLab and Bitbucket accept any name with a
	// token).
	Username string
	// Token is the password or access token. It never appears in errors
	// or logs.
	Token string
}

// Options configure a git source. Exactly one of URL and Path is set.
type Options struct {
	// URL is a remote repository to clone and fetch: https://, http://,
	// ssh://, file:// or a local path to another repository.
	URL string
	// Path is a local repository read in place; a folder inside one finds
	// the enclosing repository (paths stay relative to its root: use
	// Subdir to restrict the source to a folder).
	Path string
	// Branch is the branch to index: by default the remote's HEAD branch
	// (URL) or the current HEAD (Path).
	Branch string
	// Subdir restricts the source to one folder; document paths are
	// relative to it.
	Subdir string
	// Include are doublestar globs of the paths (relative to Subdir) to
	// index; connectors.DefaultInclude when empty.
	Include []string
	// Exclude are doublestar globs of paths to skip even if included.
	Exclude []string
	// WebURL is a template for document URLs with {repo} (the repository
	// name, without .git), {branch} and {path} (the path in the
	// repository, including Subdir), for example
	// "https://github.com/acme/{repo}/blob/{branch}/{path}".
	WebURL string
	// Space is the Document.Space of documents whose front matter names
	// none; the repository name when empty.
	Space string
	// Auth authenticates HTTP(S) remotes.
	Auth Auth
	// DataDir holds clones of remote repositories, in DataDir/git/<name>,
	// readable by the owner only. Required with URL.
	DataDir string
	// MaxBytes is the largest file read; connectors.DefaultMaxBytes when
	// 0, no limit when negative. Larger files go to Listing.Failed.
	MaxBytes int
	// Logger receives sync progress; nothing is logged when nil.
	Logger *slog.Logger
}

// listingVersion is part of the cursor's options fingerprint. It changes
// when what a listing includes changes (2: hidden paths are never
// listed), so that the first sync after an upgrade lists everything and
// deletes what is no longer listed.
const listingVersion = 2

// Source reads documents from one branch of a Git repository.
type Source struct {
	name     string
	opts     Options
	repoName string
	subdir   string
	fp       string // fingerprint of the options that shape documents
	log      *slog.Logger
	// remoteURL is opts.URL without credentials, what the clone's config
	// records as origin; remoteAuth carries the credentials instead.
	remoteURL  string
	remoteAuth transport.AuthMethod

	mu sync.Mutex // serializes syncs: one clone directory per source
}

var _ connectors.Source = (*Source)(nil)

// New returns a git source named name. It checks the options without
// touching the repository: the first List call clones or opens it.
func New(name string, opts Options) (*Source, error) {
	if name == "" {
		return nil, errors.New("git: source name is empty")
	}
	switch {
	case opts.URL == "" && opts.Path == "":
		return nil, fmt.Errorf("git: source %q: set url or path", name)
	case opts.URL != "" && opts.Path != "":
		return nil, fmt.Errorf("git: source %q: set url or path, not both", name)
	case opts.URL != "" && opts.DataDir == "":
		return nil, fmt.Errorf("git: source %q: a remote url needs a data directory to clone into", name)
	}
	if err := connectors.ValidatePatterns(opts.Include); err != nil {
		return nil, fmt.Errorf("git: source %q: include: %w", name, err)
	}
	if err := connectors.ValidatePatterns(opts.Exclude); err != nil {
		return nil, fmt.Errorf("git: source %q: exclude: %w", name, err)
	}
	subdir := strings.Trim(path.Clean("/"+filepath.ToSlash(opts.Subdir)), "/")
	var err error
	if opts.MaxBytes == 0 {
		opts.MaxBytes = connectors.DefaultMaxBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	where := opts.URL
	if opts.Path != "" {
		if where, err = filepath.Abs(opts.Path); err != nil {
			return nil, fmt.Errorf("git: source %q: path: %w", name, err)
		}
	}
	s := &Source{
		name:     name,
		opts:     opts,
		repoName: RepoName(where),
		subdir:   subdir,
		log:      opts.Logger.With(slog.String("source", name)),
	}
	if s.opts.Space == "" {
		s.opts.Space = s.repoName
	}
	s.remoteURL, s.remoteAuth = remote(opts.URL, opts.Auth)
	h := sha256.New()
	fmt.Fprintf(h, "%d %q %q %q %q %q %q %d", listingVersion, subdir, opts.Include, opts.Exclude, opts.WebURL,
		s.opts.Space, opts.Branch, opts.MaxBytes)
	s.fp = hex.EncodeToString(h.Sum(nil))[:8]
	return s, nil
}

// Name returns the configured source name.
func (s *Source) Name() string { return s.name }

// RepoName is the repository name in a URL or path: its last element
// without ".git" ("https://github.com/acme/handbook.git" gives "handbook",
// "git@github.com:acme/docs" gives "docs").
func RepoName(u string) string {
	u = strings.TrimRight(filepath.ToSlash(u), "/")
	u = strings.TrimSuffix(u, "/.git")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	return strings.TrimSuffix(u, ".git")
}

// List hands over what changed on the branch since cursor.
//
// The cursor is "<commit hash>:<options fingerprint>". When cursor is
// empty, malformed, names a commit that is unknown or not an ancestor of
// the branch head (a force-push), or was made with other options (include,
// exclude, subdir, URL template, space), List makes a complete listing of
// every matching file at the head. Otherwise it diffs the cursor's tree
// against the head's: deleted files go to Listing.Deleted, then added and
// modified files are read one at a time and handed to Listing.Document; a
// rename is both. Only paths, blob hashes and commit attributions are held
// in memory, never more than one file's content.
//
// Each document has ID "<name>:<path>" (path relative to Subdir), metadata
// from its front matter and a normalised body (connectors.ParseMarkdownWith:
// static-site markup removed, includes expanded from the head's tree), and UpdatedAt and
// Author from the last commit that touched the file (its committer time
// and author name). A front matter "updated" date is deliberately ignored:
// in a repository the history is the reliable record of change.
//
// Binary, oversized and malformed files, and blobs that cannot be read, go
// to Listing.Failed. A remote that cannot be reached, or a branch that does
// not exist, is an error that names the source and the URL (never the
// token); so are a cancelled context and an error from l.
func (s *Source) List(ctx context.Context, cursor string, l connectors.Listing) (connectors.Listed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()

	repo, head, branch, err := s.sync(ctx)
	if err != nil {
		return connectors.Listed{}, err
	}
	newCursor := head.Hash.String() + ":" + s.fp
	if cursor == newCursor || cursor == newCursor+includesMark {
		s.log.DebugContext(ctx, "git: up to date", slog.String("commit", head.Hash.String()))
		return connectors.Listed{Cursor: newCursor}, nil
	}
	headTree, err := s.subtree(head)
	if err != nil {
		return connectors.Listed{}, fmt.Errorf("git: source %q: read commit %s: %w", s.name, head.Hash, err)
	}
	if headTree == nil {
		return connectors.Listed{}, fmt.Errorf("git: source %q: folder %q not found on branch %s at %s",
			s.name, s.subdir, branch, head.Hash.String()[:12])
	}
	r := &reader{s: s, repo: repo, head: head, branch: branch, l: l, tree: headTree}

	base, why := s.baseCommit(repo, head, cursor)
	if base == nil {
		s.log.InfoContext(ctx, "git: full listing", slog.String("commit", head.Hash.String()), slog.String("reason", why))
		err = r.full(ctx, headTree)
	} else {
		err = r.incremental(ctx, base, headTree)
	}
	if err != nil {
		return connectors.Listed{}, fmt.Errorf("git: source %q: %w", s.name, err)
	}
	s.log.InfoContext(ctx, "git: changes listed",
		slog.String("commit", head.Hash.String()), slog.Bool("full", base == nil),
		slog.Int("docs", r.docs), slog.Int("deleted", r.deleted),
		slog.Int("failed", r.failed), slog.Duration("duration", time.Since(start)))
	if r.includes {
		// A change to an included file changes the documents that
		// include it, which a diff does not name: list in full next time.
		newCursor += includesMark
	}
	return connectors.Listed{Cursor: newCursor, Complete: base == nil}, nil
}

// includesMark ends the cursor of a listing whose documents include other
// files (snippets, include-markdown, partials): the next listing is
// complete, so that a page is re-read when a file it includes changes
// (the engine still skips every page whose content is the same).
const includesMark = ":includes"

// baseCommit returns the commit to diff from, or nil and the reason for a
// full listing.
func (s *Source) baseCommit(repo *gogit.Repository, head *object.Commit, cursor string) (*object.Commit, string) {
	if cursor == "" {
		return nil, "no cursor"
	}
	if strings.HasSuffix(cursor, includesMark) {
		return nil, "documents include other files"
	}
	hash, fp, ok := strings.Cut(cursor, ":")
	if !ok || len(hash) != 40 || !plumbing.IsHash(hash) {
		return nil, "unrecognized cursor"
	}
	if fp != s.fp {
		return nil, "source options changed"
	}
	base, err := repo.CommitObject(plumbing.NewHash(hash))
	if err != nil {
		return nil, "cursor commit not found"
	}
	if ok, err := base.IsAncestor(head); err != nil || !ok {
		return nil, "cursor commit is not an ancestor of the branch head"
	}
	return base, ""
}

// subtree returns the tree of Subdir in c, or nil when c has no such folder.
func (s *Source) subtree(c *object.Commit) (*object.Tree, error) {
	t, err := c.Tree()
	if err != nil || s.subdir == "" {
		return t, err
	}
	sub, err := t.Tree(s.subdir)
	if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, nil
	}
	return sub, err
}

// fullPath is a Subdir-relative path as a path in the repository.
func (s *Source) fullPath(rel string) string {
	if s.subdir == "" {
		return rel
	}
	return s.subdir + "/" + rel
}

// sync clones or fetches a remote, or opens a local repository, and
// returns the branch head.
func (s *Source) sync(ctx context.Context) (*gogit.Repository, *object.Commit, string, error) {
	if s.opts.URL != "" {
		return s.syncRemote(ctx)
	}
	repo, err := gogit.PlainOpenWithOptions(s.opts.Path, &gogit.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, nil, "", fmt.Errorf("git: source %q: open %s: %w", s.name, s.opts.Path, err)
	}
	var ref *plumbing.Reference
	branch := s.opts.Branch
	if branch == "" {
		ref, err = repo.Head()
		if err != nil {
			return nil, nil, "", fmt.Errorf("git: source %q: %s: resolve HEAD (no commits yet?): %w", s.name, s.opts.Path, err)
		}
		branch = ref.Name().Short()
		if !ref.Name().IsBranch() {
			branch = ref.Hash().String() // detached HEAD: URLs point at the commit
		}
		return s.headCommit(repo, ref.Hash(), branch, s.opts.Path)
	}
	if ref, err = repo.Reference(plumbing.NewBranchReferenceName(branch), true); err == nil {
		return s.headCommit(repo, ref.Hash(), branch, s.opts.Path)
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(branch))
	if err != nil {
		return nil, nil, "", fmt.Errorf("git: source %q: %s: branch %q: %w", s.name, s.opts.Path, branch, err)
	}
	return s.headCommit(repo, *hash, branch, s.opts.Path)
}

func (s *Source) headCommit(repo *gogit.Repository, h plumbing.Hash, branch, where string) (*gogit.Repository, *object.Commit, string, error) {
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, nil, "", fmt.Errorf("git: source %q: %s: branch %q: commit %s: %w", s.name, where, branch, h, err)
	}
	return repo, c, branch, nil
}

// cloneDir is where a remote repository is cloned.
func (s *Source) cloneDir() string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s.name)
	return filepath.Join(s.opts.DataDir, "git", safe)
}

// remote splits an HTTP(S) URL into the URL without user info and the
// basic-auth credentials to send: the configured token (with the
// configured user name, else the URL's, else "x-access-token"), or else
// the URL's own user info (a token may be given as the user name,
// https://TOKEN@host/...). go-git writes the URL it clones into the
// clone's config, so credentials must travel through its auth instead.
// Other URLs (ssh, file, local paths) are returned as they are.
func remote(rawURL string, a Auth) (string, transport.AuthMethod) {
	lower := strings.ToLower(rawURL)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return rawURL, nil
	}
	var user, pass string
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
		u.User = nil
		rawURL = u.String()
	}
	switch {
	case a.Token != "":
		name := cmp.Or(a.Username, user, "x-access-token")
		return rawURL, &githttp.BasicAuth{Username: name, Password: a.Token}
	case user != "" || pass != "":
		return rawURL, &githttp.BasicAuth{Username: user, Password: pass}
	}
	return rawURL, nil
}

func (s *Source) syncRemote(ctx context.Context) (*gogit.Repository, *object.Commit, string, error) {
	dir := s.cloneDir()
	repo, err := gogit.PlainOpen(dir)
	switch {
	case err == nil:
		if err := s.ensureOrigin(repo); err != nil {
			return nil, nil, "", s.remoteErr("configure remote", err)
		}
	case errors.Is(err, gogit.ErrRepositoryNotExists):
		if repo, err = s.clone(ctx, dir); err != nil {
			return nil, nil, "", err
		}
	default:
		s.log.WarnContext(ctx, "git: clone is unreadable, cloning again", slog.String("dir", dir), slog.Any("error", err))
		if repo, err = s.clone(ctx, dir); err != nil {
			return nil, nil, "", err
		}
	}

	branch := s.opts.Branch
	if branch == "" {
		ref, err := repo.Reference(plumbing.HEAD, false)
		if err != nil || ref.Type() != plumbing.SymbolicReference {
			return nil, nil, "", s.remoteErr("find default branch", fmt.Errorf("clone HEAD is not a branch: %v", err))
		}
		branch = ref.Target().Short()
	}
	remoteRef := plumbing.NewRemoteReferenceName("origin", branch)
	err = repo.FetchContext(ctx, &gogit.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec(fmt.Sprintf("+refs/heads/%s:%s", branch, remoteRef))},
		Auth:       s.remoteAuth,
		Tags:       gogit.NoTags,
		Force:      true,
	})
	switch {
	case errors.Is(err, gogit.NoErrAlreadyUpToDate):
		s.log.DebugContext(ctx, "git: fetch: already up to date", slog.String("branch", branch))
	case err != nil:
		return nil, nil, "", s.remoteErr("fetch branch "+branch, err)
	}
	// go-git makes pack files world-readable (0444) whatever the umask.
	if err := private.Tree(dir); err != nil {
		return nil, nil, "", fmt.Errorf("git: source %q: %w", s.name, err)
	}
	ref, err := repo.Reference(remoteRef, true)
	if err != nil {
		ref, err = repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	}
	if err != nil {
		return nil, nil, "", s.remoteErr("resolve branch "+branch, err)
	}
	return s.headCommit(repo, ref.Hash(), branch, redact.URL(s.opts.URL))
}

func (s *Source) clone(ctx context.Context, dir string) (*gogit.Repository, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("git: source %q: clear clone directory: %w", s.name, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("git: source %q: create data directory: %w", s.name, err)
	}
	opts := &gogit.CloneOptions{
		URL:          s.remoteURL,
		Auth:         s.remoteAuth,
		SingleBranch: true,
		Tags:         gogit.NoTags,
	}
	if s.opts.Branch != "" {
		opts.ReferenceName = plumbing.NewBranchReferenceName(s.opts.Branch)
	}
	start := time.Now()
	repo, err := gogit.PlainCloneContext(ctx, dir, true, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, s.remoteErr("clone", err)
	}
	s.log.InfoContext(ctx, "git: cloned", slog.String("url", redact.URL(s.opts.URL)),
		slog.String("dir", dir), slog.Duration("duration", time.Since(start)))
	return repo, nil
}

// ensureOrigin points the clone's origin at the configured URL (without
// credentials), which may have changed since the clone was made. A clone
// made by an older docent with credentials in its origin URL loses them
// here.
func (s *Source) ensureOrigin(repo *gogit.Repository) error {
	r, err := repo.Remote("origin")
	if err == nil && len(r.Config().URLs) == 1 && r.Config().URLs[0] == s.remoteURL {
		return nil
	}
	if err == nil {
		if err := repo.DeleteRemote("origin"); err != nil {
			return err
		}
	}
	_, err = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{s.remoteURL}})
	return err
}

// remoteErr wraps a clone or fetch failure with the source name and the
// URL, with the URL's user info and any token removed from the message:
// the user info of every URL in it, and whole occurrences of each secret
// (so a short user name cannot mangle ordinary words). Only the cause's
// text is searched for secrets, so a user name such as "git" cannot
// mangle the "git: source" prefix. The cause itself, still reachable with
// errors.Unwrap, is not redacted.
func (s *Source) remoteErr(op string, err error) error {
	where := redact.URL(s.opts.URL)
	// The cause may quote the URL as configured, even one that does not
	// parse (so secrets() cannot split out its user info).
	cause := err.Error()
	if s.opts.URL != "" {
		cause = strings.ReplaceAll(cause, s.opts.URL, where)
	}
	cause = redact.Secrets(redact.URLs(cause), s.secrets()...)
	msg := fmt.Sprintf("git: source %q: %s %s: %s", s.name, op, where, cause)
	return &redactedError{msg: msg, err: err}
}

// secrets are the credentials that must never appear in a message: the
// auth token, the URL's password, and its user name when it has no
// password (a token given as the user name, https://TOKEN@host/...), each
// decoded and as written. A user name beside a password is not a secret.
func (s *Source) secrets() []string {
	out := []string{s.opts.Auth.Token}
	if u, err := url.Parse(s.opts.URL); err == nil && u.User != nil {
		raw := u.User.String()
		if p, ok := u.User.Password(); ok {
			_, rawPass, _ := strings.Cut(raw, ":")
			out = append(out, p, rawPass)
		} else {
			out = append(out, u.User.Username(), raw)
		}
	}
	return out
}

// redactedError carries a message with secrets removed; the cause stays
// available to errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// reader hands the files of one commit to a listing as documents.
type reader struct {
	s      *Source
	repo   *gogit.Repository
	head   *object.Commit
	branch string
	l      connectors.Listing
	tree   *object.Tree // the head's (Subdir) tree, for includes

	docs, deleted, failed int // handed to l
	// includes is set once a document is seen to include other files.
	includes bool
}

// entry is a file to read: its Subdir-relative path and blob; or, with
// link, a symbolic link that matches the patterns, never read but
// reported (Listing.Failed, wrapping connectors.ErrNotRegular).
type entry struct {
	path string
	hash plumbing.Hash
	link bool
}

func isFile(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}

func (r *reader) full(ctx context.Context, tree *object.Tree) error {
	var entries []entry
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("walk tree: %w", err)
		}
		if !connectors.MatchPath(name, r.s.opts.Include, r.s.opts.Exclude) {
			continue
		}
		switch {
		case isFile(e.Mode):
			entries = append(entries, entry{path: name, hash: e.Hash})
		case e.Mode == filemode.Symlink:
			entries = append(entries, entry{path: name, hash: e.Hash, link: true})
		}
	}
	fragments, err := r.fragments(ctx, entries)
	if err != nil {
		return err
	}
	var left []string
	kept := entries[:0]
	for _, e := range entries {
		if fragments[e.path] {
			left = append(left, r.s.name+":"+e.path)
			continue
		}
		kept = append(kept, e)
	}
	if err := r.read(ctx, kept); err != nil {
		return err
	}
	connectors.ReportFragments(r.l, left...)
	return nil
}

// fragments returns the entries that other entries include whole (see
// connectors.WholeIncludes), and notes whether any entry includes files.
func (r *reader) fragments(ctx context.Context, entries []entry) (map[string]bool, error) {
	docs := make(map[string]bool, len(entries))
	for _, e := range entries {
		docs[e.path] = true
	}
	out := map[string]bool{}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		content, err := r.blob(e.hash)
		if err != nil {
			continue // reading it as a document reports why
		}
		for _, t := range connectors.WholeIncludes(e.path, content, func(name string) bool { return docs[name] }) {
			r.includes = true
			if t != e.path {
				out[t] = true
			}
		}
	}
	return out, nil
}

// blob reads a blob of at most the size limit.
func (r *reader) blob(h plumbing.Hash) ([]byte, error) {
	b, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	if max := r.s.opts.MaxBytes; max > 0 && b.Size > int64(max) {
		return nil, connectors.ErrTooLarge
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// include reads a file of the head tree for an include directive.
func (r *reader) include(name string) ([]byte, error) {
	if r.tree == nil || connectors.Hidden(name) {
		return nil, fs.ErrNotExist
	}
	f, err := r.tree.File(name)
	if err != nil {
		return nil, fs.ErrNotExist
	}
	if !isFile(f.Mode) {
		return nil, fs.ErrNotExist
	}
	b, err := r.blob(f.Hash)
	if err != nil || connectors.CheckText(b, r.s.opts.MaxBytes) != nil {
		return nil, fs.ErrNotExist
	}
	return b, nil
}

func (r *reader) incremental(ctx context.Context, base *object.Commit, headTree *object.Tree) error {
	baseTree, err := r.s.subtree(base)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", base.Hash, err)
	}
	changes, err := object.DiffTreeWithOptions(ctx, baseTree, headTree, object.DefaultDiffTreeOptions)
	if err != nil {
		return fmt.Errorf("diff %s..%s: %w", base.Hash.String()[:12], r.head.Hash.String()[:12], err)
	}
	var deleted []string
	var entries []entry
	match := func(p string) bool { return connectors.MatchPath(p, r.s.opts.Include, r.s.opts.Exclude) }
	for _, c := range changes {
		from, to := c.From, c.To
		// A path that is no longer a matching file at head is deleted;
		// one that is a matching file at head is (re)read. Renames do both.
		fromDoc := from.Name != "" && isFile(from.TreeEntry.Mode) && match(from.Name)
		toDoc := to.Name != "" && isFile(to.TreeEntry.Mode) && match(to.Name)
		if fromDoc && !(toDoc && to.Name == from.Name) {
			deleted = append(deleted, r.s.name+":"+from.Name)
		}
		if toDoc {
			entries = append(entries, entry{path: to.Name, hash: to.TreeEntry.Hash})
		} else if to.Name != "" && to.TreeEntry.Mode == filemode.Symlink && match(to.Name) {
			entries = append(entries, entry{path: to.Name, hash: to.TreeEntry.Hash, link: true})
		}
	}
	// A path both removed and written (a rename onto a replaced file) is
	// not deleted: it is re-read, and if it fails the old version stays.
	reread := make(map[string]bool, len(entries))
	for _, e := range entries {
		reread[r.s.name+":"+e.path] = true
	}
	deleted = slices.DeleteFunc(deleted, func(id string) bool { return reread[id] })
	if len(deleted) > 0 {
		if err := r.l.Deleted(ctx, deleted...); err != nil {
			return err
		}
		r.deleted += len(deleted)
	}
	return r.read(ctx, entries)
}

// read hands entries to the listing one at a time (Document, or Failed),
// each with the last commit that touched it.
func (r *reader) read(ctx context.Context, entries []entry) error {
	want := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !e.link {
			want[e.path] = true
		}
	}
	last, err := r.lastCommits(ctx, want)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.link {
			r.failed++
			if err := r.l.Failed(ctx, r.s.name+":"+e.path, fmt.Errorf("%w: symbolic link, not read", connectors.ErrNotRegular)); err != nil {
				return err
			}
			continue
		}
		doc, err := r.doc(e, last[e.path])
		if err != nil {
			r.failed++
			if err := r.l.Failed(ctx, r.s.name+":"+e.path, err); err != nil {
				return err
			}
			continue
		}
		r.docs++
		if err := r.l.Document(ctx, doc); err != nil {
			return err
		}
	}
	return nil
}

// doc reads one blob; its error message is shown to admins.
func (r *reader) doc(e entry, c *object.Commit) (docent.Document, error) {
	blob, err := r.repo.BlobObject(e.hash)
	if err != nil {
		return docent.Document{}, fmt.Errorf("read blob %s: %w", e.hash, err)
	}
	max := r.s.opts.MaxBytes
	if max > 0 && blob.Size > int64(max) {
		return docent.Document{}, fmt.Errorf("%w: %d bytes, over the limit of %d bytes", connectors.ErrTooLarge, blob.Size, max)
	}
	rd, err := blob.Reader()
	if err != nil {
		return docent.Document{}, fmt.Errorf("read blob %s: %w", e.hash, err)
	}
	content, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return docent.Document{}, fmt.Errorf("read blob %s: %w", e.hash, err)
	}
	if err := connectors.CheckText(content, max); err != nil {
		return docent.Document{}, err
	}
	md := connectors.ParseMarkdownWith(e.path, content, r.include)
	if len(md.Normalized.Included) > 0 || len(md.Normalized.Missing) > 0 {
		r.includes = true
	}
	if c == nil {
		c = r.head
	}
	full := r.s.fullPath(e.path)
	doc := docent.Document{
		ID:     r.s.name + ":" + e.path,
		Source: r.s.name,
		Path:   e.path,
		URL: connectors.ExpandURL(r.s.opts.WebURL, map[string]string{
			"repo": r.s.repoName, "branch": r.branch, "path": full,
		}),
		Title:     md.Title,
		Space:     md.Space,
		Labels:    md.Labels,
		Owner:     md.Owner,
		Author:    c.Author.Name,
		UpdatedAt: c.Committer.When.UTC(),
		Body:      md.Body,

		Normalized: md.Normalized,
	}
	if doc.Space == "" {
		doc.Space = r.s.opts.Space
	}
	return doc, nil
}
