package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// cliCommand is one docent command as help lists it.
type cliCommand struct {
	// name is the command; args what follows it ("[flags] QUESTION").
	name, args string
	// summary is its line in the command list.
	summary string
	// about is the paragraph of its own help, when the summary is not
	// enough.
	about string
}

// commands are the commands, in the order help lists them.
var commands = []cliCommand{
	{"serve", "[flags]", "serve the API, the console and the chat adapters; sync on schedule",
		"Syncs every source when the index is empty, then serves the JSON API, the admin console and the\n" +
			"configured chat adapters until SIGINT or SIGTERM, syncing each source on its schedule."},
	{"sync", "[flags]", "sync every source now (--source NAME for one)",
		"Syncs the configured sources into the index now and prints a summary. Refused while another\n" +
			"process (docent serve) syncs into the same data dir."},
	{"ask", "[flags] QUESTION", "answer one question in the terminal",
		"Answers a question with citations, from the configured sources (syncing them first when the\n" +
			"index is empty), and stores the turn like any other."},
	{"mcp", "[flags]", "serve MCP on stdin/stdout for a local client (Claude, Cursor, VS Code)",
		"Serves the Model Context Protocol on stdin and stdout for a local client (Claude, Cursor, VS Code):\n" +
			"search_docs, ask_docs and get_document over the configured index. docent serve offers it at /mcp."},
	{"eval", "--golden FILE | --beir DIR [flags]", "score a question set or a BEIR data set",
		"Scores a question set (docent's golden YAML) through the answer pipeline, or retrieval on a BEIR\n" +
			"data set, in a throwaway index."},
	{"chunks", "[flags]", "print the chunks as indexed (--source, --doc, --sample N --seed N, --json)",
		"Prints the chunks of the index as they were indexed: id, document, title, section path, URL and\n" +
			"text; --json prints one object per chunk, --sample N a random, reproducible (--seed) sample."},
	{"bench", "[flags]", "index throughput, query latency and peak memory", ""},
	{"load", "[flags]", "load-test a docent serve it starts", ""},
	{"config", "[flags]", "print the effective configuration, secrets redacted",
		"Prints the configuration in force (every default filled in, secrets redacted) and the\n" +
			"implementation each seam got."},
	{"reindex", "--to typesense", "copy the local index into Typesense, without re-embedding", ""},
	{"admin", "hash-password [flags]", "print a bcrypt hash for auth.admins", ""},
	{"help", "[COMMAND]", "list the commands, or show a command's flags", ""},
}

const usageIntro = `docent answers questions from your documentation, with citations.

Usage:
  docent <command> [flags] [arguments]

Commands:
`

const usageGlobal = `
Flags of every command, before or after it:
  --config FILE   the config file (default $DOCENT_CONFIG, else ./docent.yaml if present;
                  with none, the bundled example handbook, no keys or servers)
  -v              log more: one-shot commands log warnings only, serve logs at info

Run "docent help COMMAND" (or "docent COMMAND --help") for a command's flags.
`

// usage is the top-level help: every command with one line.
func usage() string {
	var b strings.Builder
	b.WriteString(usageIntro)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString(usageGlobal)
	return b.String()
}

// lookupCommand returns the command called name.
func lookupCommand(name string) (cliCommand, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return cliCommand{}, false
}

// errUsage is wrapped by every error of a command line docent cannot
// read (exit status 2).
var errUsage = errors.New("see docent help")

// errReported is wrapped by an error whose detail the command already
// printed (a sync summary): main exits non-zero without printing it again.
var errReported = errors.New("reported above")

// flagSet returns the flag set of a command, with the flags every command
// takes (--config, -v) bound to m. Nothing is printed by the flag
// package: parse reports errors and help.
func (m *Main) flagSet(name string) *flag.FlagSet {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&m.ConfigPath, "config", m.ConfigPath, "the config file")
	fl.BoolVar(&m.Verbose, "v", m.Verbose, "log more")
	return fl
}

// parse parses fl's flags wherever they are among args ("ask QUESTION
// --json" and "ask --json QUESTION" alike; everything after "--" is an
// argument) and returns the other arguments. -h or --help prints the
// command's help to Stdout and returns flag.ErrHelp.
func (m *Main) parse(fl *flag.FlagSet, args []string) ([]string, error) {
	head, tail := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		head, tail = args[:i], args[i+1:]
	}
	var rest []string
	for {
		if err := fl.Parse(head); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(m.Stdout, commandHelp(fl))
				return nil, flag.ErrHelp
			}
			return nil, fmt.Errorf("%s: %v: %w", fl.Name(), err, errUsage)
		}
		head = fl.Args()
		if len(head) == 0 {
			return append(rest, tail...), nil
		}
		rest, head = append(rest, head[0]), head[1:]
	}
}

// commandHelp is a command's help: its usage line, what it does and its
// flags with their defaults.
func commandHelp(fl *flag.FlagSet) string {
	name, _, _ := strings.Cut(fl.Name(), " ")
	c, _ := lookupCommand(name)
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: docent %s %s\n\n", name, c.args)
	about := c.about
	if about == "" {
		about = strings.ToUpper(c.summary[:1]) + c.summary[1:] + "."
	}
	b.WriteString(about + "\n")
	own := false
	fl.VisitAll(func(f *flag.Flag) { own = own || (f.Name != "config" && f.Name != "v") })
	if own {
		b.WriteString("\nFlags:\n")
		fl.VisitAll(func(f *flag.Flag) {
			if f.Name == "config" || f.Name == "v" {
				return
			}
			kind, text := flag.UnquoteUsage(f)
			dash := "-"
			if len(f.Name) > 1 {
				dash = "--"
			}
			line := "  " + dash + f.Name
			if kind != "" {
				line += " " + kind
			}
			fmt.Fprintf(&b, "%s\n      %s", line, strings.ReplaceAll(text, "\n", "\n      "))
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(text, "(default") {
				fmt.Fprintf(&b, " (default %s)", f.DefValue)
			}
			b.WriteString("\n")
		})
	}
	b.WriteString(usageGlobal[:strings.Index(usageGlobal, "\nRun ")] + "\n")
	return b.String()
}
