package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// browserPath finds Debian's chromium (installed by .ci/run when missing).
func browserPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestConsoleInBrowser drives the console in real Chromium against
// docent serve with the handbook demo: log in, ask in the playground,
// open the turn from the logs, see its candidates with ranks and scores,
// add it to the golden set, run the set and see the run's numbers, and
// see the handbook's deliberately stale pages flagged. Each page is
// screenshotted into a temp dir (DOCENT_SCREENSHOTS keeps them in a
// folder of your choice; DOCENT_UPDATE_README_SCREENSHOT=1 rewrites
// docs/console-turn.png) and any console error on a page fails the test.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	browser := browserPath()
	if browser == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium in CI: .ci/run installs Debian's chromium")
		}
		t.Skip("no chromium on this machine (apt-get install chromium)")
	}
	shots := os.Getenv("DOCENT_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	var stdout, logs syncBuffer
	m := &Main{Stdout: &stdout, Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	base, stop := MustServeMain(t, m)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	waitReady(t, base)
	password := mustOneTimePassword(t, logs.String())

	// Chromium's helper processes can still write to the profile for a
	// moment after the browser exits, which fails t.TempDir's cleanup: the
	// profile is removed here, retried, and never fails the test.
	profile, err := os.MkdirTemp("", "docent-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 10 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()

	// Every console error, uncaught exception and error log entry (a CSP
	// violation, a failed request) fails the test.
	var mu sync.Mutex
	var consoleErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				consoleErrors = append(consoleErrors, "console."+string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				consoleErrors = append(consoleErrors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	step := func(name string, actions ...chromedp.Action) {
		t.Helper()
		sctx, scancel := context.WithTimeout(ctx, 3*time.Minute)
		defer scancel()
		if err := chromedp.Run(sctx, actions...); err != nil {
			t.Fatalf("%s: %v\nserver log:\n%s", name, err, tail(logs.String(), 3000))
		}
	}
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			if os.Getenv("DOCENT_SCREENSHOTS") == "" {
				return nil // nobody keeps them: a full-page screenshot costs a second
			}
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		})
	}
	// docShot keeps the visible part of the page as docs/NAME.png when
	// DOCENT_UPDATE_DOCS_SCREENSHOTS=1 (the screenshots docs/console.md shows).
	docShot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			if os.Getenv("DOCENT_UPDATE_DOCS_SCREENSHOTS") != "1" {
				return nil
			}
			var png []byte
			if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join("..", "..", "docs", name+".png"), png, 0o644)
		})
	}
	// Start the browser on the tab's own context: a step's context ends
	// with the step, and the first Run ties the browser to its context.
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	// Log in.
	step("log in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`[data-testid=login-form]`, chromedp.ByQuery),
		chromedp.SendKeys(`input[name=user]`, "admin", chromedp.ByQuery),
		chromedp.SendKeys(`input[name=password]`, password, chromedp.ByQuery),
		shot("01-login"),
		chromedp.Click(`[data-testid=login-submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=questions]`, chromedp.ByQuery),
		shot("02-overview"),
	)

	// Ask in the playground.
	const question = "What does Gatekeeper error GK-409 mean?"
	var status string
	step("ask in the playground",
		chromedp.Navigate(base+"/playground"),
		chromedp.WaitVisible(`[data-testid=playground-question]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-testid=playground-question]`, question, chromedp.ByQuery),
		chromedp.Click(`[data-testid=playground-ask]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=candidate]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid=answer] [data-testid=status]`, &status, chromedp.ByQuery),
		shot("03-playground"),
	)
	if status != "answered" {
		t.Fatalf("playground answer status = %q", status)
	}

	// Open the turn from the logs: the newest row is the playground's.
	var firstQuestion string
	step("open the turn from the logs",
		chromedp.Navigate(base+"/turns"),
		chromedp.WaitVisible(`[data-testid=turn-row]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid=turn-row] [data-testid=turn-link]`, &firstQuestion, chromedp.ByQuery),
		shot("04-logs"),
		chromedp.Click(`[data-testid=turn-row] [data-testid=turn-link]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=candidates]`, chromedp.ByQuery),
	)
	if firstQuestion != question {
		t.Fatalf("newest turn in the logs = %q, want the playground question", firstQuestion)
	}
	var kwRanks, vecRanks, fused []string
	step("read the candidates",
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=candidate] [data-testid=keyword-rank]')).map(e => e.textContent.trim())`, &kwRanks),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=candidate] [data-testid=vector-rank]')).map(e => e.textContent.trim())`, &vecRanks),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=candidate] [data-testid=fused-score]')).map(e => e.textContent.trim())`, &fused),
		shot("05-turn"),
	)
	// Candidates are listed in the answer's final order (after the page
	// reranker), so the keyword list's first is among them, not always first.
	if len(kwRanks) < 3 || !slices.Contains(kwRanks, "1") || len(vecRanks) != len(kwRanks) || len(fused) != len(kwRanks) {
		t.Fatalf("candidates: keyword ranks %v, vector ranks %v, fused %v", kwRanks, vecRanks, fused)
	}
	for _, f := range fused {
		if v, err := strconv.ParseFloat(f, 64); err != nil || v <= 0 {
			t.Errorf("fused score %q", f)
		}
	}
	if slices.ContainsFunc(vecRanks, func(s string) bool { return s != "–" }) == false {
		t.Errorf("no candidate has a vector rank: %v", vecRanks)
	}
	if os.Getenv("DOCENT_UPDATE_README_SCREENSHOT") == "1" {
		step("README screenshot", chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join("..", "..", "docs", "console-turn.png"), png, 0o644)
		}))
	}

	// Add it to the golden set, with the expected document picked from the candidates.
	var count string
	step("add to the golden set",
		chromedp.Click(`[data-testid=golden-from-turn] [data-testid=golden-pick]`, chromedp.ByQuery),
		chromedp.SetValue(`[data-testid=golden-from-turn] [data-testid=golden-id]`, "e2e-gk-409", chromedp.ByQuery),
		chromedp.Click(`[data-testid=golden-from-turn] [data-testid=golden-save]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=golden-questions]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid=golden-count]`, &count, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=golden-question][data-id=e2e-gk-409]`, chromedp.ByQuery),
	)
	if count != "59" {
		t.Errorf("golden set has %s questions, want the handbook's 58 and the new one", count)
	}

	// Run it and see the run and its numbers (the page refreshes itself
	// while the run is in progress).
	var hit5, mrr, nfa, passed string
	step("run the golden set",
		chromedp.Click(`[data-testid=golden-run]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=run-numbers]`, chromedp.ByQuery),
		chromedp.Text(`[data-testid=run-numbers] [data-testid=run-hit5]`, &hit5, chromedp.ByQuery),
		chromedp.Text(`[data-testid=run-numbers] [data-testid=run-mrr]`, &mrr, chromedp.ByQuery),
		chromedp.Text(`[data-testid=run-numbers] [data-testid=run-declined]`, &nfa, chromedp.ByQuery),
		chromedp.Text(`[data-testid=run-passed]`, &passed, chromedp.ByQuery),
		shot("06-golden-run"), docShot("console-golden-run"),
	)
	// The page shows the run's real figures (TestEvalGolden holds the
	// bars themselves): near what `docent eval` gives on the same set.
	for _, m := range []struct {
		name, v string
		min     float64
	}{{"hit@5", hit5, 0.9}, {"MRR@10", mrr, 0.7}, {"unanswerable declined", nfa, 0.6}} {
		f, err := strconv.ParseFloat(m.v, 64)
		if err != nil || f < m.min || f > 1 {
			t.Errorf("%s = %q, want the handbook's figure (>= %.1f)", m.name, m.v, m.min)
		}
	}
	if !strings.HasSuffix(passed, "/59") {
		t.Errorf("passed = %q, want out of 59", passed)
	}
	var e2eRow string
	step("the new question's row",
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=run-row]')).map(r => r.textContent).find(t => t.includes('e2e-gk-409')) || ''`, &e2eRow),
		chromedp.Navigate(base+"/golden"),
		chromedp.WaitVisible(`[data-testid=golden-trend]`, chromedp.ByQuery),
		shot("07-golden"),
	)
	if !strings.Contains(e2eRow, "pass") || !strings.Contains(e2eRow, "handbook:it/gatekeeper-error-codes.md") {
		t.Errorf("the new question's run row = %q, want a pass with the Gatekeeper page ranked", e2eRow)
	}

	// Drill from the run's row to the question's trace.
	var runURL, drilled string
	step("drill from a run row to the trace",
		chromedp.Navigate(base+"/golden"),
		chromedp.WaitVisible(`[data-testid=golden-trend]`, chromedp.ByQuery),
		chromedp.Evaluate(`(document.querySelector('a[href^="/golden/runs/"]') || {}).href || ''`, &runURL),
	)
	if runURL == "" {
		t.Fatal("the golden page links to no run")
	}
	step("open the row's trace",
		chromedp.Navigate(runURL),
		chromedp.WaitVisible(`[data-testid=run-row][data-question=e2e-gk-409] [data-testid=run-row-trace]`, chromedp.ByQuery),
		chromedp.Click(`[data-testid=run-row][data-question=e2e-gk-409] [data-testid=run-row-trace]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=candidates]`, chromedp.ByQuery),
		chromedp.Text(`h1`, &drilled, chromedp.ByQuery),
		shot("12-golden-run-trace"),
	)
	if !strings.Contains(drilled, question) {
		t.Errorf("the run row's trace opens %q, want the question's turn", drilled)
	}

	// The handbook's deliberately stale pages are flagged.
	var flagged []string
	var conflict string
	step("stale documents",
		chromedp.Navigate(base+"/stale"),
		chromedp.WaitVisible(`[data-testid=stale-row]`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=stale-row]')).map(r => r.dataset.doc)`, &flagged),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=stale-row][data-doc="handbook:travel/expense-policy-2021.md"] [data-testid=stale-finding]')).map(f => f.dataset.kind).join(',')`, &conflict),
		shot("08-stale"),
	)
	for _, doc := range []string{"product/legacy-v1-api.md", "it/guest-wifi.md", "engineering/code-review.md",
		"travel/expense-policy-2021.md", "people/performance-reviews.md"} {
		if !slices.Contains(flagged, "handbook:"+doc) {
			t.Errorf("%s is not flagged stale; flagged: %v", doc, flagged)
		}
	}
	if !strings.Contains(conflict, "conflict") {
		t.Errorf("the 2021 expense policy's findings = %q, want a conflict with the current one", conflict)
	}

	// The other pages render in the browser too; the handbook's syncs are healthy.
	var health string
	step("other pages",
		chromedp.Navigate(base+"/misses"), chromedp.WaitVisible(`[data-testid=miss-total]`, chromedp.ByQuery), shot("09-misses"),
		chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(`[data-testid=source-row]`, chromedp.ByQuery), shot("10-sources"),
		chromedp.Text(`[data-testid=source-row][data-source=handbook] [data-testid=source-health]`, &health, chromedp.ByQuery),
		chromedp.Navigate(base+"/tokens"), chromedp.WaitVisible(`[data-testid=token-form]`, chromedp.ByQuery), shot("11-tokens"),
	)
	if health != "healthy" {
		t.Errorf("the handbook's sync health = %q, want healthy", health)
	}

	// A cited page under /docs is styled by its stylesheet (no inline
	// style for the CSP to block: a violation would be a console error).
	var docFont string
	var docSheets int
	step("a /docs page",
		chromedp.Navigate(base+"/docs/handbook/it/gatekeeper-error-codes.md"),
		chromedp.WaitVisible(`h1`, chromedp.ByQuery),
		chromedp.Evaluate(`getComputedStyle(document.body).fontFamily`, &docFont),
		chromedp.Evaluate(`Array.from(document.styleSheets).filter(s => s.href && s.cssRules.length > 0).length`, &docSheets),
		shot("13-docs-page"), docShot("console-docs-page"),
	)
	if docSheets == 0 || strings.Contains(docFont, "Times") {
		t.Errorf("/docs page: %d stylesheets applied, font %q; want its stylesheet, not the browser's default", docSheets, docFont)
	}

	// Coverage gaps from a seeded set of misses: two topics, each rated
	// not helpful through POST /api/feedback, each with its closest page.
	seeded := map[string][]string{
		"parking": {"Where is the parking garage?", "How much does parking cost a month?", "Is parking free for visitors?"},
		"dental":  {"Does the dental plan cover braces?", "Which dentists are in the dental network?", "How do I claim a dental cleaning?"},
	}
	for _, qs := range seeded {
		for _, q := range qs {
			code, body := apiPost(t, base, "/api/ask", "", `{"question": `+strconv.Quote(q)+`}`)
			var r struct {
				TurnID int64 `json:"turn_id"`
			}
			if code != http.StatusOK || json.Unmarshal([]byte(body), &r) != nil {
				t.Fatalf("ask %q = %d %s", q, code, body)
			}
			if code, body := apiPost(t, base, "/api/feedback", "", fmt.Sprintf(`{"turn_id": %d, "helpful": false}`, r.TurnID)); code/100 != 2 {
				t.Fatalf("feedback on %q = %d %s", q, code, body)
			}
		}
	}
	var gapSizes, gapTerms, gapPages []string
	step("coverage gaps",
		chromedp.Navigate(base+"/misses"),
		chromedp.WaitVisible(`[data-testid=to-gaps]`, chromedp.ByQuery),
		chromedp.Click(`[data-testid=to-gaps]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid=gap]`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=gap]')).map(g => g.dataset.size)`, &gapSizes),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=gap] [data-testid=gap-terms]')).map(g => g.textContent.trim())`, &gapTerms),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('[data-testid=gap]')).map(g => ((g.querySelector('[data-testid=gap-page] a') || {}).textContent || '').trim())`, &gapPages),
		shot("14-gaps"), docShot("console-gaps"),
	)
	if len(gapSizes) < 2 || gapSizes[0] != "3" || gapSizes[1] != "3" || gapPages[0] == "" || gapPages[1] == "" {
		t.Errorf("gaps: sizes %v, terms %v, closest pages %v; want the two seeded topics of 3, each with its page's title", gapSizes, gapTerms, gapPages)
	}
	for topic := range seeded {
		if !slices.ContainsFunc(gapTerms[:min(2, len(gapTerms))], func(s string) bool { return strings.Contains(s, topic) }) {
			t.Errorf("no gap about %s among %v", topic, gapTerms)
		}
	}

	// Keyboard only: Tab to a filter, browse its options with the arrow
	// keys (the page stays, the focus too), apply with Enter; the focus is
	// on the filter again after the reload.
	var tabs int
	var stayed bool
	var focusBefore, focusAfter, afterURL string
	step("keyboard through the filters",
		chromedp.Navigate(base+"/turns"),
		chromedp.WaitVisible(`[data-testid=filter-status]`, chromedp.ByQuery),
		chromedp.ActionFunc(func(ctx context.Context) error {
			for tabs = 1; tabs <= 40; tabs++ {
				if err := chromedp.KeyEvent(kb.Tab).Do(ctx); err != nil {
					return err
				}
				var on bool
				if err := chromedp.Evaluate(`document.activeElement && document.activeElement.dataset.testid === 'filter-status'`, &on).Do(ctx); err != nil {
					return err
				}
				if on {
					return nil
				}
			}
			return fmt.Errorf("40 tabs never reached the status filter")
		}),
		chromedp.Evaluate(`window.stayed = true`, nil),
		chromedp.KeyEvent(kb.ArrowDown),
		chromedp.KeyEvent(kb.ArrowDown),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Evaluate(`window.stayed === true`, &stayed),
		chromedp.Evaluate(`document.activeElement.name`, &focusBefore),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`[data-testid=filter-status]`, chromedp.ByQuery),
		chromedp.Poll(`location.search.includes('status=')`, nil),
		chromedp.Poll(`document.readyState === 'complete'`, nil),
		chromedp.Evaluate(`document.activeElement.name || ''`, &focusAfter),
		chromedp.Location(&afterURL),
	)
	if !stayed || focusBefore != "status" || focusAfter != "status" || !strings.Contains(afterURL, "status=") {
		t.Errorf("keyboard: page kept while browsing %v, focus %q then %q after Enter (%s); want the filter kept and applied",
			stayed, focusBefore, focusAfter, afterURL)
	}

	// A pasted question with a long unbroken token, for the narrow turn page.
	code, body := apiPost(t, base, "/api/ask", "", `{"question": "why does `+strings.Repeat("x", 300)+` fail?"}`)
	var long struct {
		TurnID int64 `json:"turn_id"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &long) != nil {
		t.Fatalf("ask the long question = %d %s", code, body)
	}

	// Every form field on every page has a label (its <label>, aria-label
	// or aria-labelledby).
	pages := []string{"/", "/turns", "/turns/" + strconv.FormatInt(long.TurnID, 10), "/misses", "/gaps", "/golden", "/golden/new",
		"/golden/q/e2e-gk-409", "/golden/import", strings.TrimPrefix(runURL, base), "/stale", "/sources", "/playground", "/tokens"}
	for _, pg := range pages {
		var unlabelled []string
		step("labels on "+pg,
			chromedp.Navigate(base+pg),
			chromedp.WaitReady(`main`, chromedp.ByQuery),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('input, select, textarea'))
				.filter(e => !['hidden', 'submit', 'button', 'reset'].includes(e.type))
				.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
				.map(e => e.name || e.id || e.outerHTML.slice(0, 80))`, &unlabelled),
		)
		if len(unlabelled) > 0 {
			t.Errorf("%s: fields without a label: %v", pg, unlabelled)
		}
	}

	// At 390 px (a phone) the logs, a turn with a long token and the
	// misses fit the width: wide tables scroll in their box, not the page.
	step("narrow viewport", chromedp.EmulateViewport(390, 844))
	for _, pg := range []struct{ path, wait, name, doc string }{
		{"/turns", `[data-testid=turn-row]`, "15-logs-390", ""},
		{"/turns/" + strconv.FormatInt(long.TurnID, 10), `[data-testid=candidates]`, "16-turn-390", "console-turn-390"},
		{"/misses", `[data-testid=turn-row]`, "17-misses-390", ""},
	} {
		var pageWidth, viewWidth int
		var wide []string
		step("390 px "+pg.path,
			chromedp.Navigate(base+pg.path),
			chromedp.WaitVisible(pg.wait, chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &pageWidth),
			chromedp.Evaluate(`document.documentElement.clientWidth`, &viewWidth),
			// The outermost elements that reach past the view, to say what is wide.
			chromedp.Evaluate(`Array.from(document.querySelectorAll('body *'))
				.filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
				.filter(e => !e.parentElement.closest('.scroll, nav') && !e.matches('.scroll, nav'))
				.slice(0, 5).map(e => e.tagName + '.' + e.className + '[' + (e.dataset.testid || '') + '] ' + Math.round(e.getBoundingClientRect().right))`, &wide),
			shot(pg.name),
		)
		if pg.doc != "" {
			step("docs screenshot "+pg.doc, docShot(pg.doc))
		}
		if pageWidth > viewWidth {
			t.Errorf("%s at 390 px: the page is %d px wide in a %d px view: %v", pg.path, pageWidth, viewWidth, wide)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrors) > 0 {
		t.Errorf("console errors in the pages:\n%s", strings.Join(consoleErrors, "\n"))
	}
	t.Logf("screenshots in %s", shots)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…%s", s[len(s)-n:])
}
