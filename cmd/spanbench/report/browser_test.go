package report

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser test opens a rendered report in a real headless Chromium
// (Debian's chromium package) through the DevTools protocol, with chromedp:
// it reports the page's console messages, exceptions and every request it
// makes, which --dump-dom and --screenshot on the command line cannot.
// chromedp talks to the browser over a pipe, so the test opens no port.

// chromiumPath finds Chromium, or fails the test saying how to install it:
// the report's promise (nothing fetched, every plot drawn) is only checked
// in a real browser, so a missing one is an error, never a skip.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not on PATH: install Debian's chromium package (`make deps`, or hack/install-deps.sh chromium)")
	return ""
}

// browserLog is what the page did besides rendering, collected from
// DevTools events.
type browserLog struct {
	mu       sync.Mutex
	requests []string
	problems []string
}

func (b *browserLog) event(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	case *runtime.EventConsoleAPICalled:
		b.problems = append(b.problems, fmt.Sprintf("console.%s called", ev.Type))
	case *runtime.EventExceptionThrown:
		b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		// Browser-side messages: CSP violations, failed loads, parse errors.
		b.problems = append(b.problems, fmt.Sprintf("%s (%s): %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text))
	}
}

// plotInfo is what the page shows of one figure, measured in the browser.
type plotInfo struct {
	Kind      string  `json:"kind"`
	Operation string  `json:"operation"`
	Variant   string  `json:"variant"`
	Run       string  `json:"run"`
	Width     float64 `json:"width"`
	Height    float64 `json:"height"`
	// Points is the largest number of points of one drawn path: a data
	// line has one per interval or quantile; axes and ticks have two.
	Points int `json:"points"`
	// Filled counts the shapes filled with a colour other than the white
	// background: bars, shades.
	Filled int `json:"filled"`
	// Panels are the operations of its panels' data areas, in order ("" for
	// a panel of no operation).
	Panels []string `json:"panels"`
}

const measurePlots = `Array.from(document.querySelectorAll('figure.plot')).map(f => {
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  let points = 0, filled = 0;
  for (const p of (svg ? svg.querySelectorAll('path') : [])) {
    points = Math.max(points, ((p.getAttribute('d') || '').match(/[ML]/g) || []).length);
    const fill = getComputedStyle(p).fill;
    if (fill !== 'none' && fill !== 'rgb(255, 255, 255)') filled++;
  }
  const run = f.closest('section.run');
  const panels = svg ? Array.from(svg.querySelectorAll('rect.data-area')).map(a => a.dataset.operation || '') : [];
  return {kind: f.dataset.plot, operation: f.dataset.operation || '', variant: f.dataset.variant || '',
          run: run ? run.dataset.run : '', width: box.width, height: box.height, points: points, filled: filled, panels: panels};
})`

// TestReportInChromium renders two runs with a warm-up (one of them with a
// hostile operation name) into one page and opens it in headless
// Chromium: the page must load without a console message or any request
// but its own, and show every plot, drawn. The screenshot is an artefact
// (go test -artifacts keeps it; the test logs where).
func TestReportInChromium(t *testing.T) {
	hostile := `<img src=x onerror=alert(1)>`
	a := warmingRun("nightly-1", "read", hostile).document(t)
	b := warmingRun("nightly-2", "read", hostile)
	b.baseMicros, b.seed = 5000, 8
	runs := []Run{{Label: a.Run, Doc: a}, {Label: "nightly-2", Doc: b.document(t)}}

	var page bytes.Buffer
	if err := WriteHTML(&page, runs...); err != nil {
		t.Fatal(err)
	}
	checkPlots(t, browse(t, page.Bytes(), "report"), runs)
}

// TestServerFiguresInChromium opens a run with Spanner's statistics and
// Cloud Monitoring's figures in headless Chromium: no console message, no
// request, every plot still drawn, and the server, CPU, latency and
// requests tables laid out with the figures the document holds.
func TestServerFiguresInChromium(t *testing.T) {
	d := withServerFigures(warmingRun("served", "read", "update").document(t))
	runs := []Run{{Label: d.Run, Doc: d}}
	var page bytes.Buffer
	if err := WriteHTML(&page, runs...); err != nil {
		t.Fatal(err)
	}
	plots, tables := browseTables(t, page.Bytes(), "server")
	checkPlots(t, plots, runs)
	got := map[string]tableInfo{}
	for _, tb := range tables {
		got[tb.Section] = tb
		if tb.Width < 100 || tb.Height < 20 {
			t.Errorf("table %s is %.0fx%.0f px; want it laid out", tb.Section, tb.Width, tb.Height)
		}
	}
	if s := got["server"].Rows; len(s) != 2 || strings.Join(s[0][:3], " ") != "read 564µs 4" || !strings.HasPrefix(s[1][1], "not captured") {
		t.Errorf("the server table shows %q; want read at 564µs/op over 4 executions, the update not captured", s)
	}
	if c := got["cpu"].Rows; len(c) != 1 || strings.Join(c[0], " ") != "high asia-northeast1 52.3 % 61.0 %" {
		t.Errorf("the CPU table shows %q; want high in asia-northeast1 at 52.3 %%, 61.0 %%", c)
	}
	if l := got["latency"].Rows; len(l) != 1 || l[0][3] != "12.5ms" {
		t.Errorf("the latency table shows %q; want Commit's server p99 12.5ms", l)
	}
	if r := got["requests"].Rows; len(r) != 1 || strings.Join(r[0], " ") != "OK 1200" {
		t.Errorf("the requests table shows %q; want OK 1200", r)
	}
}

// TestComparisonReportInChromium opens a campaign's comparison page (with
// a hostile variant name) in headless Chromium: no console message, no
// request, and one laid-out ratio plot per variant with a bar per row.
func TestComparisonReportInChromium(t *testing.T) {
	c := sampleComparison()
	var page bytes.Buffer
	if err := WriteComparisonHTML(&page, c); err != nil {
		t.Fatal(err)
	}
	plots := browse(t, page.Bytes(), "comparison")
	rows := map[string]int{}
	var want []string
	for _, r := range c.Table.Rows {
		if rows[r.Variant] == 0 {
			want = append(want, r.Variant)
		}
		rows[r.Variant]++
	}
	var got []string
	for _, p := range plots {
		got = append(got, p.Variant)
		if p.Kind != "ratio" || p.Width < 200 || p.Height < 80 || p.Filled < rows[p.Variant] {
			t.Errorf("plot %s of variant %q is %.0fx%.0f px with %d filled shapes; want a laid-out ratio plot with a bar for each of its %d rows",
				p.Kind, p.Variant, p.Width, p.Height, p.Filled, rows[p.Variant])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the page shows ratio plots of variants %q, want %q", got, want)
	}
}

// browse writes page into the test's artefact directory as name.html,
// opens it in headless Chromium, saves a screenshot (name.png), fails the
// test on any request but the page's own and any console message or
// exception, and returns its plots as laid out.
func browse(t *testing.T, page []byte, name string) []plotInfo {
	t.Helper()
	plots, _ := browseTables(t, page, name)
	return plots
}

// tableInfo is one summary table as the browser lays it out: its
// data-section, size and the text of its body's cells, row by row.
type tableInfo struct {
	Section string     `json:"section"`
	Width   float64    `json:"width"`
	Height  float64    `json:"height"`
	Rows    [][]string `json:"rows"`
}

const measureTables = `Array.from(document.querySelectorAll('table.summary[data-section]')).map(t => {
  const box = t.getBoundingClientRect();
  return {section: t.dataset.section, width: box.width, height: box.height,
          rows: Array.from(t.tBodies[0].rows).map(r => Array.from(r.cells).map(c => c.innerText.trim()))};
})`

// browseTables is browse, also returning the page's sectioned tables as
// the browser shows them.
func browseTables(t *testing.T, page []byte, name string) ([]plotInfo, []tableInfo) {
	t.Helper()
	p := browsePage(t, page, name)
	return p.plots, p.tables
}

// pageInfo is what browsePage measured of a page.
type pageInfo struct {
	plots   []plotInfo
	tables  []tableInfo
	figures []figureLayout
}

// browsePage opens page in headless Chromium as browse does and measures
// its plots, tables and figures' layout (readability_browser_test.go).
func browsePage(t *testing.T, page []byte, name string) pageInfo {
	t.Helper()
	chromium := chromiumPath(t)
	dir := t.ArtifactDir()
	file := filepath.Join(dir, name+".html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: file}).String()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.WindowSize(1280, 900),
		// Nothing may leave the machine even if the page asked.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		// Chromium makes its singleton socket's directory under TMPDIR
		// and leaves it behind: the test's own directory goes with it.
		chromedp.Env("TMPDIR="+t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root otherwise
	}
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	var seen browserLog
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithListener(seen.event))
	defer cancelTab()

	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("opening %s in %s: %v", pageURL, chromium, err)
	}
	plots, err := chromedp.Run(ctx, chromedp.Evaluate[[]plotInfo](measurePlots))
	if err != nil {
		t.Fatalf("measuring the plots: %v", err)
	}
	tables, err := chromedp.Run(ctx, chromedp.Evaluate[[]tableInfo](measureTables))
	if err != nil {
		t.Fatalf("measuring the tables: %v", err)
	}
	figures, err := chromedp.Run(ctx, chromedp.Evaluate[[]figureLayout](measureFigures))
	if err != nil {
		t.Fatalf("measuring the figures' layout: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(dir, name+".png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); page: %s", shot, len(png), file)

	seen.mu.Lock()
	defer seen.mu.Unlock()
	for _, r := range seen.requests {
		if r != pageURL {
			t.Errorf("the page requested %s; a report must fetch nothing", r)
		}
	}
	for _, p := range seen.problems {
		t.Errorf("browser reported: %s", p)
	}
	return pageInfo{plots: plots, tables: tables, figures: figures}
}

// checkPlots wants, per run, a throughput plot and the latency panels of
// every operation, then the percentile panels of every operation; each
// laid out with a size and a data line of several points.
func checkPlots(t *testing.T, plots []plotInfo, runs []Run) {
	t.Helper()
	var want, got []string
	for i, r := range runs {
		want = append(want, fmt.Sprintf("run %d throughput", i),
			fmt.Sprintf("run %d latency of %s", i, strings.Join(operationNames(r.Doc), ", ")))
	}
	want = append(want, "distribution of "+strings.Join(operationNames(runs[0].Doc), ", "))
	for _, p := range plots {
		name := p.Kind
		if ops := strings.Join(p.Panels, ", "); ops != "" {
			name += " of " + ops
		}
		if p.Run != "" {
			name = "run " + p.Run + " " + name
		}
		got = append(got, name)
		if p.Width < 200 || p.Height < 80 || p.Points < 10 {
			t.Errorf("plot %q is %.0fx%.0f px and its longest path has %d points; want a laid-out plot with a data line",
				name, p.Width, p.Height, p.Points)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the page shows plots\n  %q\nwant\n  %q", got, want)
	}
}
