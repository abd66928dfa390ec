package connectors

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
)

// stage is a temporary file of pending documents, written once in order and
// read back as often as needed: the changed documents of a run with a
// Trainable embedder (kept until the model is fitted), or the stored chunks
// of a re-embedding. It lets the engine hold one document at a time where
// it would otherwise hold them all.
//
// It is private to one run and needs no crash safety: a run that dies
// before reading it back has stored no cursor, so the next run lists the
// same documents again. The file is unlinked right after it is made (where
// the operating system allows an open file to be removed), so that even a
// killed process leaves nothing behind.
type stage struct {
	f    *os.File
	path string // still to remove on close; "" once unlinked
	w    *bufio.Writer
	enc  *gob.Encoder
	n    int // documents added
}

// newStage makes an empty stage file in dir (the temporary directory when
// dir is "").
func newStage(dir string) (*stage, error) {
	f, err := os.CreateTemp(dir, "docent-stage-*")
	if err != nil {
		return nil, fmt.Errorf("stage: %w", err)
	}
	s := &stage{f: f, path: f.Name()}
	if os.Remove(f.Name()) == nil {
		s.path = ""
	}
	s.w = bufio.NewWriterSize(f, 1<<16)
	s.enc = gob.NewEncoder(s.w)
	return s, nil
}

// add appends p to the file.
func (s *stage) add(p *pendingDoc) error {
	if err := s.enc.Encode(p); err != nil {
		return fmt.Errorf("stage: write %s: %w", p.Doc.ID, err)
	}
	s.n++
	return nil
}

// each reads the documents back in the order they were added and calls fn
// with each; it stops at fn's first error and returns it. Nothing may be
// added after the first call.
func (s *stage) each(fn func(*pendingDoc) error) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	dec := gob.NewDecoder(bufio.NewReaderSize(s.f, 1<<16))
	for range s.n {
		p := new(pendingDoc)
		if err := dec.Decode(p); err != nil {
			return fmt.Errorf("stage: read: %w", err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// close releases the file and removes it.
func (s *stage) close() error {
	err := s.f.Close()
	if s.path != "" {
		err = errors.Join(err, os.Remove(s.path))
	}
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	return nil
}
