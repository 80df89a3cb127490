package report

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/spanbench/spanbench/result"
)

// TestTPCCRunShowsTpmCAndItsChecks: a TPC-C run's page shows tpmC, the
// executed mix and each consistency condition, a failed one marked with
// where it failed (escaped: the detail is untrusted); a run without TPC-C
// figures has no such section.
func TestTPCCRunShowsTpmCAndItsChecks(t *testing.T) {
	const hostile = `<img src=x onerror=alert(1)>`
	r := docRun(t, warmingRun("tpcc", "new-order"))
	r.Doc.TPCC = &result.TPCC{TpmC: 1523.04, CommittedTpmC: 1507.8,
		Mix: []result.TPCCShare{{Type: "NewOrder", Completed: 45, Percent: 45}, {Type: "Payment", Completed: 43, Percent: 43}},
		Checks: []result.Check{{Name: "W_YTD = sum(D_YTD)", Passed: true},
			{Name: "sum(O_OL_CNT) = count(OL)", Detail: "district 1/2: " + hostile}}}
	_, doc := render(t, r)
	var tpmC, mix string
	checks := map[string]*html.Node{}
	walk(doc, func(n *html.Node) {
		switch {
		case n.Type == html.ElementNode && n.Data == "dd" && attr(n, "class") == "tpmc":
			tpmC = textOf(n)
		case n.Type == html.ElementNode && n.Data == "dt" && textOf(n) == "mix executed" && n.NextSibling != nil:
			mix = textOf(n.NextSibling)
		case n.Type == html.ElementNode && n.Data == "tr" && attr(n, "data-check") != "":
			checks[attr(n, "data-check")] = n
		case n.Type == html.ElementNode && n.Data == "img":
			t.Errorf("the page has an <img>: a check's detail was not escaped")
		}
	})
	if !strings.HasPrefix(tpmC, "1523.0 ") || !strings.Contains(tpmC, "clause 5.4.2") || !strings.Contains(tpmC, "1507.8 committed") {
		t.Errorf("tpmC shows %q; want 1523.0 first, the clause that counts the rolled-back ones, and 1507.8 committed beside it", tpmC)
	}
	if mix != "NewOrder 45.0 %, Payment 43.0 %" {
		t.Errorf("the mix shows %q", mix)
	}
	if c := checks["W_YTD = sum(D_YTD)"]; c == nil || !strings.Contains(textOf(c), "passed") {
		t.Errorf("the passed condition is missing or not shown as passed")
	}
	c := checks["sum(O_OL_CNT) = count(OL)"]
	if c == nil || !strings.Contains(textOf(c), "FAILED: district 1/2: "+hostile) || !strings.Contains(attr(c.LastChild, "class"), "warn") {
		t.Errorf("the failed condition is missing, or not marked FAILED with its detail as text")
	}
	plain := docRun(t, warmingRun("ycsb", "read"))
	if out, _ := render(t, plain); strings.Contains(out, `class="tpcc"`) {
		t.Error("a run without TPC-C figures has a TPC-C section")
	}
}

// TestAnUncheckedTPCCRunSaysSo: a TPC-C run whose consistency check could
// not run shows why, marked, where its checks would be: its figures are
// unverified, and the page does not pass over it in silence.
func TestAnUncheckedTPCCRunSaysSo(t *testing.T) {
	r := docRun(t, warmingRun("tpcc", "new-order"))
	r.Doc.TPCC = &result.TPCC{TpmC: 1523.04, NotChecked: "not checked: the checks took longer than 2m1s"}
	_, doc := render(t, r)
	var note *html.Node
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && strings.Contains(attr(n, "class"), "notchecked") {
			note = n
		}
	})
	if note == nil || !strings.Contains(textOf(note), "NOT CHECKED: not checked: the checks took longer than 2m1s") || !strings.Contains(attr(note, "class"), "warn") {
		t.Errorf("the unchecked run's page does not say, marked, that and why it was not checked")
	}
}
