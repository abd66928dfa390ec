package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"
)

// minPasswordLen is the shortest console password hash-password accepts.
const minPasswordLen = 12

// Admin runs the admin subcommands: hash-password reads a password (from
// the terminal without echo, asked twice, or the first line of stdin)
// and prints its bcrypt hash for auth.admins[].password_hash.
func (m *Main) Admin(_ context.Context, args []string) error {
	fl := m.flagSet("admin")
	cost := fl.Int("cost", 12, "bcrypt cost (10-15)")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] != "hash-password" {
		return fmt.Errorf("admin: the one admin command is hash-password (it reads the password from the terminal or stdin): %w", errUsage)
	}
	if *cost < 10 || *cost > 15 {
		return fmt.Errorf("admin: --cost must be between 10 and 15, got %d", *cost)
	}
	password, err := m.readPassword()
	if err != nil {
		return err
	}
	if len([]rune(password)) < minPasswordLen {
		return fmt.Errorf("admin: the password must be at least %d characters", minPasswordLen)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), *cost)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	fmt.Fprintln(m.Stdout, string(hash))
	return nil
}

// readPassword asks twice on a terminal, else reads stdin's first line.
func (m *Main) readPassword() (string, error) {
	if f, ok := m.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(m.Stderr, "Password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(m.Stderr)
		if err != nil {
			return "", fmt.Errorf("admin: read password: %w", err)
		}
		fmt.Fprint(m.Stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(m.Stderr)
		if err != nil {
			return "", fmt.Errorf("admin: read password: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("admin: the passwords differ")
		}
		return string(a), nil
	}
	if m.Stdin == nil {
		return "", errors.New("admin: no password on stdin")
	}
	line, err := bufio.NewReader(m.Stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", errors.New("admin: no password on stdin")
	}
	return strings.TrimRight(line, "\r\n"), nil
}
