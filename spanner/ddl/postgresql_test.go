package ddl_test

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/spanner/ddl"
)

var pgDDL = []string{
	`CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre text, updated spanner.commit_timestamp, PRIMARY KEY (singer_id))`,
	`CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title character varying, sales bigint, tags text[],
	  PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE`,
	`CREATE INDEX albums_by_title ON albums (title) INTERLEAVE IN singers`,
}

func TestParsePostgreSQLReadsTablesKeysTypesParentsAndIndexes(t *testing.T) {
	s, err := ddl.ParsePostgreSQL(pgDDL)
	if err != nil {
		t.Fatalf("ParsePostgreSQL: %v", err)
	}
	a := s.Table("albums")
	if a == nil || a.Parent != "singers" || strings.Join(a.Key, ",") != "singer_id,album_id" {
		t.Fatalf("albums = %+v, want interleaved in singers with key singer_id,album_id", a)
	}
	for _, c := range []struct {
		table, col, typ string
		array, commit   bool
	}{
		{"singers", "singer_id", "INT64", false, false},
		{"singers", "name", "STRING", false, false},
		{"singers", "updated", "TIMESTAMP", false, true},
		{"albums", "title", "STRING", false, false},
		{"albums", "tags", "STRING", true, false},
	} {
		got := s.Table(c.table).Column(c.col)
		if got == nil || got.Type != c.typ || got.Array != c.array || got.CommitTimestamp != c.commit {
			t.Errorf("%s.%s = %+v, want type %s, array %v, commit timestamp %v", c.table, c.col, got, c.typ, c.array, c.commit)
		}
	}
	if ix := s.Index("albums", "albums_by_title"); ix == nil || ix.Columns[0] != "title" {
		t.Errorf("index albums_by_title = %+v", ix)
	}
}

func TestParsePostgreSQLNamesTheBadStatement(t *testing.T) {
	for _, tc := range []struct {
		ddl  []string
		want string
	}{
		{[]string{pgDDL[0], `CREATE TABLE x (`}, "does not parse"},
		{[]string{pgDDL[1]}, "singers, which no earlier statement creates"},
		{[]string{pgDDL[0], `CREATE INDEX i ON singers (nope)`}, "column nope"},
		{[]string{pgDDL[0], `DROP TABLE singers`}, "only CREATE TABLE and CREATE INDEX"},
		{[]string{`CREATE TABLE t (id bigint, v int4, PRIMARY KEY (id))`}, "type int4 is not supported"},
		{[]string{`CREATE TABLE t (id bigint)`}, "no PRIMARY KEY"},
		{[]string{pgDDL[0], `CREATE INDEX i ON singers (name) INTERLEAVE IN PARENT singers`}, "an index is interleaved with INTERLEAVE IN"},
		{[]string{`CREATE TABLE t (id bigint PRIMARY KEY); CREATE TABLE u (id bigint PRIMARY KEY)`}, "holds 2 statements"},
	} {
		_, err := ddl.ParsePostgreSQL(tc.ddl)
		var se *ddl.StatementError
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePostgreSQL(%q) = %v, want an error containing %q", tc.ddl, err, tc.want)
			continue
		}
		if !asStatementError(err, &se) || se.Index != len(tc.ddl)-1 {
			t.Errorf("ParsePostgreSQL(%q): error %v does not name statement %d", tc.ddl, err, len(tc.ddl)-1)
		}
	}
}

func TestPostgreSQLStatementFindsParamsTheirColumnsAndBadNames(t *testing.T) {
	s, err := ddl.ParsePostgreSQL(pgDDL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql    string
		dml    bool
		params map[string]string // parameter: its column, "" for none
	}{
		{`SELECT name, genre AS g FROM singers WHERE singer_id = $1 ORDER BY g`, false, map[string]string{"p1": "singer_id"}},
		{`SELECT a.title FROM singers s JOIN albums a ON a.singer_id = s.singer_id WHERE s.singer_id IN ($1, $2) LIMIT $3`, false,
			map[string]string{"p1": "singer_id", "p2": "singer_id", "p3": ""}},
		{`WITH top AS (SELECT singer_id FROM albums WHERE sales > $1::bigint) SELECT count(*) FROM top`, false, map[string]string{"p1": "sales"}},
		{`INSERT INTO albums (singer_id, album_id, title) VALUES ($1, $2, $3)`, true, map[string]string{"p1": "singer_id", "p2": "album_id", "p3": "title"}},
		{`UPDATE albums SET sales = sales + $1 WHERE singer_id = $2`, true, map[string]string{"p1": "sales", "p2": "singer_id"}},
		{`DELETE FROM albums WHERE singer_id = $1 AND album_id BETWEEN $2 AND $3`, true, map[string]string{"p1": "singer_id", "p2": "album_id", "p3": "album_id"}},
	} {
		st, err := s.Statement(tc.sql)
		if err != nil {
			t.Errorf("Statement(%q): %v", tc.sql, err)
			continue
		}
		if st.DML != tc.dml || len(st.Params) != len(tc.params) {
			t.Errorf("Statement(%q) = DML %v, params %v; want DML %v, params %v", tc.sql, st.DML, st.Params, tc.dml, tc.params)
		}
		for p, col := range tc.params {
			got := ""
			if c := st.ParamColumns[p]; c != nil {
				got = c.Name
			}
			if got != col {
				t.Errorf("Statement(%q): %s meets column %q, want %q", tc.sql, s.ParamText(p), got, col)
			}
		}
	}
	for sql, want := range map[string]string{
		`SELECT nope FROM singers`:                           "column nope is not a column of singers",
		`SELECT name FROM nosuch`:                            "table nosuch is not created by the DDL",
		`UPDATE singers SET nope = $1`:                       "column nope is not a column of singers",
		`INSERT INTO singers (singer_id, x) VALUES ($1, $2)`: "column x is not a column of singers",
		`SELECT name FROM singers WHERE`:                     "does not parse",
		`SELECT name FROM singers WHERE singer_id = @id`:     "@id is a GoogleSQL parameter; PostgreSQL's are $1..$n",
		`CREATE TABLE x (id bigint PRIMARY KEY)`:             "only queries and INSERT, UPDATE, DELETE",
	} {
		if _, err := s.Statement(sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Statement(%q) = %v, want an error containing %q", sql, err, want)
		}
	}
	if s.ParamText("p2") != "$2" {
		t.Errorf(`ParamText("p2") = %q, want "$2"`, s.ParamText("p2"))
	}
}

// TestPostgreSQLRefusesDeepNestingBeforeItsJSON: libpg_query's WebAssembly
// build faults (a panic) or spins forever writing the JSON of a statement
// nested a few hundred levels deep; such a statement, 2 KB of text, must
// be refused with an error instead, in the DDL and in a statement.
func TestPostgreSQLRefusesDeepNestingBeforeItsJSON(t *testing.T) {
	const want = "nests too deeply"
	deep := strings.Repeat("SELECT (", 250) + "SELECT 1" + strings.Repeat(")", 250)
	s, err := ddl.ParsePostgreSQL(pgDDL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Statement(deep); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Statement(250 nested subqueries) = %v, want an error containing %q", err, want)
	}
	check := `CREATE TABLE t (id bigint PRIMARY KEY CHECK (id > ` + strings.Repeat("f(", 400) + "1" + strings.Repeat(")", 400) + `))`
	if _, err := ddl.ParsePostgreSQL([]string{check}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParsePostgreSQL(a CHECK nesting 400 calls) = %v, want an error containing %q", err, want)
	}
	// Nesting a benchmark's statements have is read as before.
	shallow := strings.Repeat("SELECT (", 20) + "SELECT singer_id FROM singers WHERE singer_id = $1" + strings.Repeat(")", 20)
	if st, err := s.Statement(shallow); err != nil || len(st.Params) != 1 {
		t.Errorf("Statement(20 nested subqueries) = %+v, %v; want one parameter, no error", st, err)
	}
}
