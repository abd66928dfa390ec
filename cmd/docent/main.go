// Command docent syncs documentation into a hybrid index and answers
// questions from it with citations.
//
//	docent serve                 sync if the index is empty, then serve HTTP
//	docent sync [--source NAME]  sync sources now
//	docent ask "question"        answer one question in the terminal
//	docent mcp                   serve one MCP client on stdin/stdout
//	docent eval --golden FILE    score the golden set
//	docent eval --beir DIR       score retrieval on a BEIR data set
//	docent bench                 index and query benchmarks
//	docent reindex --to typesense  copy the local index into Typesense
//	docent chunks [--sample N]   print the chunks as indexed
//	docent load                  load test of a server it starts
//	docent admin hash-password   print a bcrypt hash for auth.admins
//	docent help [COMMAND]        the commands, or one command's flags
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "docent:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 for a command line docent cannot read, 1 for any other
// failure.
func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// run parses the command line and dispatches to a command. --config and
// -v may come before the command or among its own flags; help (help,
// -h, --help, COMMAND --help) goes to stdout and is no error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	m := &Main{Stdout: stdout, Stderr: stderr, Stdin: os.Stdin, Getenv: os.LookupEnv}
	defer m.Close()
	global := m.flagSet("docent")
	rest, err := m.parseGlobal(global, args)
	if errors.Is(err, flag.ErrHelp) || (err == nil && len(rest) > 0 && rest[0] == "help" && len(rest) == 1) {
		fmt.Fprint(stdout, usage())
		return nil
	}
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		fmt.Fprint(stderr, usage())
		return fmt.Errorf("no command: %w: %w", errUsage, errReported)
	}
	cmd, cmdArgs := rest[0], rest[1:]
	if cmd == "help" { // help COMMAND: that command's --help
		cmd, cmdArgs = cmdArgs[0], []string{"--help"}
	}
	m.OneShot = cmd != "serve"
	err = m.dispatch(ctx, cmd, cmdArgs)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// parseGlobal parses the flags before the command and returns the command
// and what follows it.
func (m *Main) parseGlobal(fl *flag.FlagSet, args []string) ([]string, error) {
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%v: %w", err, errUsage)
	}
	return fl.Args(), nil
}

// dispatch runs the command called cmd.
func (m *Main) dispatch(ctx context.Context, cmd string, args []string) error {
	switch cmd {
	case "serve":
		return m.Serve(ctx, args)
	case "sync":
		return m.Sync(ctx, args)
	case "ask":
		return m.Ask(ctx, args)
	case "mcp":
		return m.MCP(ctx, args)
	case "eval":
		return m.Eval(ctx, args)
	case "bench":
		return m.Bench(ctx, args)
	case "load":
		return m.Load(ctx, args)
	case "config":
		return m.PrintConfig(ctx, args)
	case "chunks":
		return m.Chunks(ctx, args)
	case "reindex":
		return m.Reindex(ctx, args)
	case "admin":
		return m.Admin(ctx, args)
	}
	return fmt.Errorf("unknown command %q: %w", cmd, errUsage)
}
