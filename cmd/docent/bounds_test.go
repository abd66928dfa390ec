package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/api"
)

// binaryFixture is the docent binary, built once for the tests that
// measure a process from outside (its peak memory, its file limits).
var binaryFixture struct {
	sync.Once
	dir, path string
	err       error
}

// docentBinary builds the binary once (skipped with -short).
// DOCENT_TEST_BINARY names another build to probe instead (an older
// release, to see these probes fail on it).
func docentBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCENT_TEST_BINARY"); p != "" {
		return p
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binaryFixture.Do(func() {
		dir, err := os.MkdirTemp("", "docent-bin-")
		if err != nil {
			binaryFixture.err = err
			return
		}
		binaryFixture.dir, binaryFixture.path = dir, filepath.Join(dir, "docent")
		if out, err := exec.Command("go", "build", "-o", binaryFixture.path, ".").CombinedOutput(); err != nil {
			binaryFixture.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryFixture.err != nil {
		t.Fatal(binaryFixture.err)
	}
	return binaryFixture.path
}

// peakRSS is the peak resident memory of an exited command, in bytes.
func peakRSS(t *testing.T, cmd *exec.Cmd) int64 {
	t.Helper()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// vmHWM is the peak resident memory of a running process, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc status")
	return 0
}

// folderConfig writes a config with data in dir/data, scheduled syncs
// off, the folder root as source "local", and extra top-level YAML.
func folderConfig(t *testing.T, dir, root, extra string) string {
	t.Helper()
	return writeConsoleConfig(t, dir, "data_dir: "+filepath.Join(dir, "data")+"\nsync:\n  schedule: \"off\"\n"+extra+
		"sources:\n  - name: local\n    type: dir\n    dir:\n      path: "+root+"\n")
}

// TestSyncHundredThousandHeadings: `docent sync` of a page of 100,000
// headings stays under 400 MB peak RSS (667–807 MB and 100,001 chunks on
// c60df2c; about 150 MB now, 40 MB of it the process with a one-line
// page), indexes it as sync.max_chunks_per_doc chunks (500 here: the
// chunker merges the short sections into about a thousand chunks, fewer
// than the default 2000) and says in the run that the rest was left out.
// The second page gives each heading a line of text (1.1 MB, under a
// raised sync.max_doc_bytes): the chunker stops at the cap there too.
// It does not run in parallel: the child's peak depends on its collector
// keeping up, which the package's parallel tests slow (409 MB beside them
// on a busy machine).
func TestSyncHundredThousandHeadings(t *testing.T) {
	cutShort := regexp.MustCompile(`cut short local:headings\.md: indexed as its first 500 chunks, the cap per document; at least [1-9][0-9]* more were left out`)
	bin := docentBinary(t)
	for _, tc := range []struct {
		name, format, extra string
	}{
		{"headings only, 0.9 MB", "# H%05d\n", ""},
		{"a line under each heading, 1.1 MB", "# H%05d\nx\n", "  max_doc_bytes: 2097152\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "docs")
			var page strings.Builder
			for i := range 100_000 {
				fmt.Fprintf(&page, tc.format, i)
			}
			mustWriteDocs(t, root, map[string]string{"headings.md": page.String(), "office.md": tinyDocs["office.md"]})
			cfg := writeConsoleConfig(t, dir, "data_dir: "+filepath.Join(dir, "data")+"\nsync:\n  schedule: \"off\"\n  max_chunks_per_doc: 500\n"+tc.extra+
				"sources:\n  - name: local\n    type: dir\n    dir:\n      path: "+root+"\n")
			cmd := exec.Command(bin, "--config", cfg, "sync")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("docent sync: %v\n%s", err, out)
			}
			if rss := peakRSS(t, cmd); rss > 400<<20 {
				t.Errorf("docent sync of %d KB of 100,000 headings peaked at %d MB, want under 400 MB", page.Len()>>10, rss>>20)
			} else {
				t.Logf("%d KB page: peak RSS %d MB", page.Len()>>10, rss>>20)
			}
			if !cutShort.Match(out) {
				t.Errorf("sync output does not name the page cut short and how much was left out:\n%s", out)
			}
			db := mustOpenStore(t, filepath.Join(dir, "data"))
			rec, err := db.Document(context.Background(), "local:headings.md")
			if err != nil || len(rec.ChunkIDs) != 500 {
				t.Errorf("headings.md indexed as %d chunks (%v), want 500", len(rec.ChunkIDs), err)
			}
			runs, err := db.ListRuns(context.Background(), "local", 1)
			if err != nil || len(runs) != 1 || runs[0].Added != 2 || runs[0].Failed != 0 || len(runs[0].Errors) != 1 || !runs[0].Errors[0].Truncated {
				t.Errorf("stored run %+v, %v: want both pages added and the long one named truncated", runs, err)
			}
		})
	}
}

// TestDocsPathologicalRendersBounded: twenty requests at once for a
// 350 KB page that costs goldmark much memory to render (1.5 GB peak for
// twenty on c60df2c) add little to serve's peak memory: renders run a
// few at a time and the rest are told to retry.
func TestDocsPathologicalRendersBounded(t *testing.T) {
	t.Parallel()
	bin := docentBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "docs")
	mustWriteDocs(t, root, map[string]string{"links.md": "# Links\n\n" + strings.Repeat("[a](b) ", 50_000) + "\n"})
	cfg := folderConfig(t, dir, root, "")
	base, pid, _ := startServe(t, bin, cfg, nil)
	before := vmHWM(t, pid)
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			resp, err := http.Get(base + "/docs/local/links.md")
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[http.StatusOK] == 0 || count[http.StatusOK]+count[http.StatusServiceUnavailable] != 20 {
		t.Errorf("20 renders at once: %v, want pages and retries only", count)
	}
	grew := vmHWM(t, pid) - before
	if grew > 400<<20 {
		t.Errorf("20 renders at once raised peak memory by %d MB, want under 400 MB", grew>>20)
	}
	t.Logf("responses %v, peak memory %d MB -> +%d MB", count, before>>20, grew>>20)
}

// startServe runs the binary's serve on a free port until the test ends
// (SIGTERM, then wait), with argv before it (a wrapper like prlimit),
// and returns its base URL once ready, its pid and its log.
func startServe(t *testing.T, bin, cfg string, wrapper []string) (string, int, *syncBuffer) {
	t.Helper()
	addr := testAddr(t)
	args := append(append(wrapper[:len(wrapper):len(wrapper)], bin), "--config", cfg, "serve", "--addr", addr)
	cmd := exec.Command(args[0], args[1:]...)
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", tail(stderr.String(), 4000))
		}
	})
	base := "http://" + addr
	waitReady(t, base)
	return base, cmd.Process.Pid, stderr
}

// TestDiskFull: with the data dir's files unable to grow (a file size
// limit on the process, as a full disk), asks get 503
// storage_unavailable naming the store stage, /readyz fails, the log
// holds one line for the burst, not two per ask (a bare 500 on
// c60df2c, /readyz ready, two lines each); once files can grow again
// /readyz recovers and asks are answered.
func TestDiskFull(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("no prlimit (util-linux)")
	}
	bin := docentBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "docs")
	mustWriteDocs(t, root, tinyDocs)
	cfg := folderConfig(t, dir, root, "")
	if out, err := exec.Command(bin, "--config", cfg, "sync").CombinedOutput(); err != nil {
		t.Fatalf("docent sync: %v\n%s", err, out)
	}
	// Files may be rewritten but not grow past the largest one: the
	// store's WAL fills up after a few turns.
	limit := int64(256 << 10)
	entries, _ := os.ReadDir(filepath.Join(dir, "data"))
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			limit = max(limit, info.Size()+64<<10)
		}
	}
	base, pid, logs := startServe(t, bin, cfg, []string{prlimit, "--fsize=" + strconv.FormatInt(limit, 10) + ":unlimited"})

	var failed []askResult
	for i := 0; i < 400 && len(failed) < 20; i++ {
		r := ask(t, http.DefaultClient, base, "When does the office open?")
		switch r.status {
		case http.StatusOK:
			if len(failed) > 0 {
				t.Fatalf("ask %d answered after asks failed to store", i)
			}
		case http.StatusServiceUnavailable:
			failed = append(failed, r)
		default:
			t.Fatalf("ask %d = %d %s, want 200 or 503", i, r.status, r.body)
		}
	}
	if len(failed) < 20 {
		t.Fatalf("400 asks with a full disk: %d failed to store", len(failed))
	}
	var f api.AskFailure
	if err := json.Unmarshal(failed[0].body, &f); err != nil || f.Error != api.CodeStorageUnavailable || f.Stage != api.StageStore ||
		!strings.Contains(f.Message, "could not be stored") || failed[0].retryAfter == "" {
		t.Errorf("a failed ask = %s (%v), Retry-After %q; want storage_unavailable, stage store", failed[0].body, err, failed[0].retryAfter)
	}
	code, body := getWith(t, nil, base+"/readyz", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, api.CodeStorageUnavailable) {
		t.Errorf("/readyz with writes failing = %d %s, want 503 storage_unavailable", code, body)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n > 3 {
		t.Errorf("%d error lines for 20 failed asks, want the burst in one or two:\n%s", n, tail(logs.String(), 2000))
	}

	if out, err := exec.Command(prlimit, "--pid", strconv.Itoa(pid), "--fsize=unlimited:unlimited").CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v %s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ = getWith(t, nil, base+"/readyz", nil)
		if code == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Fatalf("/readyz once files can grow = %d, want 200", code)
	}
	if r := ask(t, http.DefaultClient, base, "When does the office open?"); r.status != http.StatusOK {
		t.Errorf("ask after recovery = %d %s", r.status, r.body)
	}
}

// TestSpecialFilesAndPipes: a source folder with a named pipe, a
// symbolic link, a device, a page over sync.max_doc_bytes and a binary
// page syncs, naming each in the run (links and pipes went unreported on
// c60df2c); a served page swapped for a named pipe answers within 3 s
// for every one of 200 requests (each blocked forever on c60df2c), and
// the API goes on answering.
func TestSpecialFilesAndPipes(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "docs")
	mustWriteDocs(t, root, map[string]string{
		"office.md": tinyDocs["office.md"], "vpn.md": tinyDocs["vpn.md"],
		"big.md": "# Big\n\n" + strings.Repeat("Long words here. ", 400), "binary.md": "# Bin\n\x00\x01\x02",
	})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "vpn.md"), filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"local:pipe.md": "named pipe", "local:link.md": "symbolic link",
		"local:big.md": "over the limit", "local:binary.md": "binary"}
	if err := syscall.Mknod(filepath.Join(root, "null.md"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		want["local:null.md"] = "device"
	}
	cfg := folderConfig(t, dir, root, "")
	raw, _ := os.ReadFile(cfg)
	cfg = writeConsoleConfig(t, dir, strings.Replace(string(raw), "sync:\n", "sync:\n  max_doc_bytes: 4096\n", 1))
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	base, _ := serveReady(t, m)

	runs, err := m.Store.ListRuns(context.Background(), "local", 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	got := map[string]docent.DocError{}
	for _, e := range runs[0].Errors {
		got[e.ID] = e
	}
	for id, kind := range want {
		if !strings.Contains(got[id].Err, kind) || got[id].Retry {
			t.Errorf("run names %s as %+v, want %q, not retried", id, got[id], kind)
		}
	}
	if runs[0].Added != 2 || runs[0].Failed != len(want) {
		t.Errorf("run added %d, failed %d; want 2 and %d", runs[0].Added, runs[0].Failed, len(want))
	}

	if code, _ := getWith(t, nil, base+"/docs/local/office.md", nil); code != http.StatusOK {
		t.Fatalf("office.md = %d", code)
	}
	if err := os.Remove(filepath.Join(root, "office.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "office.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	codes := make(chan int, 200)
	for range 200 {
		go func() {
			resp, err := client.Get(base + "/docs/local/office.md")
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	// A blocked open would hang for good; each client gives up after 10s
	// (code 0, an error below), so the deadline only bounds a stuck test.
	deadline := time.After(30 * time.Second)
	for range 200 {
		select {
		case c := <-codes:
			if c != http.StatusNotFound {
				t.Errorf("a page swapped for a pipe = %d, want 404", c)
			}
		case <-deadline:
			t.Fatal("requests for a page swapped for a named pipe did not all answer within 30s")
		}
	}
	if r := ask(t, http.DefaultClient, base, "How do I reset my VPN token?"); r.status != http.StatusOK {
		t.Errorf("/api/ask after the pipe = %d", r.status)
	}
}

// openPTY opens a pseudo-terminal pair: the controlling side, read by
// the test, and the terminal, given to serve as its stdout.
func openPTY(t *testing.T) (ctl, term *os.File) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("pty test is Linux only")
	}
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ctl.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		ctl.Close()
		t.Skipf("pty number: %v", err)
	}
	term, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ctl.Close()
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { term.Close(); ctl.Close() })
	return ctl, term
}

// TestOneTimePasswordOnlyToATerminal: the demo's one-time password is
// printed when stdout is a terminal, never logged and never written to
// a file then (it went to stdout whatever it was on c60df2c; with a log
// file for stdout it landed in the log; the file case is
// TestServeDemoOnLocalhost).
func TestOneTimePasswordOnlyToATerminal(t *testing.T) {
	t.Parallel()
	ctl, term := openPTY(t)
	data := handbookData(t)
	var logs syncBuffer
	base, stop := serveReady(t, &Main{Stdout: term, Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": data})})
	printed := make(chan string, 1)
	go func() {
		r := bufio.NewReader(ctl)
		line, _ := r.ReadString('\n')
		printed <- line
	}()
	var line string
	select {
	case line = <-printed:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing printed to the terminal")
	}
	m := oneTimePassword.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("terminal shows %q, want the one-time password", line)
	}
	if strings.Contains(logs.String(), m[1]) || passwordFile.MatchString(logs.String()) {
		t.Error("the one-time password is in the log, or a file was made, with a terminal at hand")
	}
	if _, err := os.Stat(filepath.Join(data, oneTimePasswordFile)); err == nil {
		t.Error("a password file was written with a terminal at hand")
	}
	c := newConsoleClient(t, base)
	c.login("admin", m[1])
	_ = stop()
}
