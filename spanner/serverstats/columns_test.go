package serverstats

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestTheCollectorReadsOnlyDocumentedColumns: every column the collector
// selects is in Google's documented table, with the type its scanner
// reads; a column a table lacks by design (READ_STATS has no latency) is
// indeed not documented, so it is never selected by mistake.
func TestTheCollectorReadsOnlyDocumentedColumns(t *testing.T) {
	for _, r := range []tableRead{queryRead, readRead, txnRead, lockRead} {
		for _, f := range r.fields {
			c, documented := r.schema.Column(f.column)
			switch {
			case r.lacksField(f.column) && documented:
				t.Errorf("%s documents %s (%s at %s), yet the collector reads it as NULL", r.schema.Kind, f.column, c.Type, r.schema.Source)
			case r.lacksField(f.column):
			case !documented:
				t.Errorf("the collector selects %s.%s, which %s does not document", r.schema.Kind, f.column, r.schema.Source)
			case c.Type != f.typ:
				t.Errorf("%s.%s is %s at %s; the collector reads it as %s", r.schema.Kind, f.column, c.Type, r.schema.Source, f.typ)
			case !c.InDialect(v1alpha1.DialectPostgreSQL):
				t.Errorf("%s.%s has no PostgreSQL-dialect column; the collector reads it in both dialects", r.schema.Kind, f.column)
			}
		}
		if r.tag != "" {
			if _, ok := r.schema.Column(r.tag); !ok {
				t.Errorf("%s: the tag column %s is not documented", r.schema.Kind, r.tag)
			}
		}
	}
}

// TestPlanPutsATypedNullForAnAbsentColumn: a column the database lacks is
// selected as a NULL of its documented type, in the dialect's spelling,
// and only a column the rows need makes the table unreadable.
func TestPlanPutsATypedNullForAnAbsentColumn(t *testing.T) {
	present := map[string]bool{}
	for _, c := range QueryStatsTop.Columns {
		present[c.Name] = c.Name != "AVG_REMOTE_SERVER_CALLS"
	}
	for d, null := range map[v1alpha1.Dialect]string{v1alpha1.DialectGoogleSQL: "CAST(NULL AS FLOAT64)",
		v1alpha1.DialectPostgreSQL: "CAST(NULL AS float8)"} {
		p := queryRead.plan(d, present)
		if got := strings.Join(p.cols, ", "); !strings.Contains(got, "AVG_BYTES, "+null+", LATENCY_DISTRIBUTION_JSON_STRING") {
			t.Errorf("%s: select list %q, want %s in place of AVG_REMOTE_SERVER_CALLS", d, got, null)
		}
		if p.unreadable || len(p.absent) != 1 || p.absent[0].column != "AVG_REMOTE_SERVER_CALLS" {
			t.Errorf("%s: absent %+v unreadable %v, want only AVG_REMOTE_SERVER_CALLS, readable", d, p.absent, p.unreadable)
		}
	}
	present["EXECUTION_COUNT"] = false
	if p := queryRead.plan(v1alpha1.DialectGoogleSQL, present); !p.unreadable {
		t.Errorf("without EXECUTION_COUNT a row says nothing, yet the table is planned as readable: %+v", p)
	}
}
