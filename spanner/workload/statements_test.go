package workload

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestBothDialectsTakeTheSameParameters: every statement uses the same
// parameters p1, p2, ... in both dialects (@p1 in GoogleSQL, $1 in
// PostgreSQL), so the one Params map an operation builds serves both.
func TestBothDialectsTakeTheSameParameters(t *testing.T) {
	gsqlParam, pgParam := regexp.MustCompile(`@p(\d+)`), regexp.MustCompile(`\$(\d+)`)
	used := func(re *regexp.Regexp, sql string) []string {
		var ps []string
		for _, m := range re.FindAllStringSubmatch(sql, -1) {
			ps = append(ps, m[1])
		}
		slices.Sort(ps)
		return slices.Compact(ps)
	}
	for name, sets := range map[string][2]any{
		"YCSB":  {ycsbStatements[v1alpha1.DialectGoogleSQL], ycsbStatements[v1alpha1.DialectPostgreSQL]},
		"Tweet": {tweetStatements[v1alpha1.DialectGoogleSQL], tweetStatements[v1alpha1.DialectPostgreSQL]},
	} {
		g, p := reflect.ValueOf(sets[0]).Elem(), reflect.ValueOf(sets[1]).Elem()
		for i := range g.NumField() {
			if g.Field(i).Kind() != reflect.String {
				continue
			}
			field := g.Type().Field(i).Name
			gs, ps := g.Field(i).String(), p.Field(i).String()
			if gs == "" || ps == "" {
				t.Errorf("%s %s is missing in a dialect: GoogleSQL %q, PostgreSQL %q", name, field, gs, ps)
			}
			if a, b := used(gsqlParam, gs), used(pgParam, ps); !slices.Equal(a, b) {
				t.Errorf("%s %s: GoogleSQL uses parameters %v, PostgreSQL %v", name, field, a, b)
			}
			if gsqlParam.MatchString(ps) || pgParam.MatchString(gs) {
				t.Errorf("%s %s mixes the dialects' parameter forms:\n%s\n%s", name, field, gs, ps)
			}
		}
	}
	if cols := strings.Join(ycsbColumns, ", "); !strings.Contains(ycsbSelect, "SELECT "+cols+" FROM "+ycsbTable) ||
		!strings.Contains(ycsbStatements[v1alpha1.DialectPostgreSQL].insert, "("+cols+")") {
		t.Errorf("the YCSB statements do not list usertable's columns %s in order", cols)
	}
}
