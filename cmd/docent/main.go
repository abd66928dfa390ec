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

const usage = `docent answers questions from your documentation, with citations.

Usage:
  docent [--config FILE] <command> [flags]

Commands:
  serve     sync if the index is empty, then serve the API and the console (default localhost:8080)
  sync      sync all sources now (--source NAME for one)
  ask       answer a question: docent ask "how do I reset my VPN token?" [--json]
  mcp       serve MCP on stdin/stdout for a local client (Claude, Cursor, VS Code); serve offers it at /mcp
  eval      score retrieval: --golden FILE or --beir DIR [--mode bm25|vector|hybrid] [--json]
  bench     index throughput, query latency and peak memory (--scifact DIR, --synthetic N)
  load      drive /api/ask with concurrent clients (--clients 32,200 --duration 60s)
  config    print the effective configuration, secrets redacted
  chunks    print the chunks as indexed [--source S] [--doc ID] [--sample N --seed N] [--json]
  reindex   --to typesense: copy the local index (chunks and vectors, no re-embedding) into index.typesense
  admin     hash-password: read a password and print its bcrypt hash for auth.admins

The config file is --config, else $DOCENT_CONFIG, else ./docent.yaml if present;
with none, docent runs the bundled example handbook with no keys or servers.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "docent:", err)
		}
		os.Exit(exitCode(err))
	}
}

func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

var errUsage = errors.New("usage error")

// run parses the global flags and dispatches to a command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("docent", flag.ContinueOnError)
	global.SetOutput(stderr)
	global.Usage = func() { fmt.Fprint(stderr, usage) }
	configPath := global.String("config", "", "config file (default $DOCENT_CONFIG or ./docent.yaml)")
	if err := global.Parse(args); err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	m := &Main{ConfigPath: *configPath, Stdout: stdout, Stderr: stderr, Stdin: os.Stdin, Getenv: os.LookupEnv}
	defer m.Close()
	cmd, cmdArgs := rest[0], rest[1:]
	switch cmd {
	case "serve":
		return m.Serve(ctx, cmdArgs)
	case "sync":
		return m.Sync(ctx, cmdArgs)
	case "ask":
		return m.Ask(ctx, cmdArgs)
	case "mcp":
		return m.MCP(ctx, cmdArgs)
	case "eval":
		return m.Eval(ctx, cmdArgs)
	case "bench":
		return m.Bench(ctx, cmdArgs)
	case "load":
		return m.Load(ctx, cmdArgs)
	case "config":
		return m.PrintConfig(ctx, cmdArgs)
	case "chunks":
		return m.Chunks(ctx, cmdArgs)
	case "reindex":
		return m.Reindex(ctx, cmdArgs)
	case "admin":
		return m.Admin(ctx, cmdArgs)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "docent: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}
