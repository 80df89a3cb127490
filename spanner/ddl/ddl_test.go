package ddl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/spanner/ddl"
)

var schemaDDL = []string{
	`CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)`,
	`CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE`,
	`CREATE INDEX AlbumsByTitle ON Albums(Title)`,
}

func TestParseReadsTablesKeysParentsAndIndexes(t *testing.T) {
	s, err := ddl.Parse(schemaDDL)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	a := s.Table("albums")
	if a == nil || a.Parent != "Singers" || strings.Join(a.Key, ",") != "SingerId,AlbumId" {
		t.Fatalf("Albums = %+v, want interleaved in Singers with key SingerId,AlbumId", a)
	}
	if c := s.Table("Singers").Column("Updated"); c == nil || !c.CommitTimestamp || c.Type != "TIMESTAMP" {
		t.Errorf("Singers.Updated = %+v, want a TIMESTAMP allowing commit timestamps", c)
	}
	if ix := s.Index("Albums", "AlbumsByTitle"); ix == nil || ix.Columns[0] != "Title" {
		t.Errorf("index AlbumsByTitle = %+v", ix)
	}
}

func TestParseNamesTheBadStatement(t *testing.T) {
	for _, tc := range []struct {
		ddl  []string
		want string
	}{
		{[]string{schemaDDL[0], `CREATE TABLE X (`}, "does not parse"},
		{[]string{schemaDDL[1]}, "Singers, which no earlier statement creates"},
		{[]string{schemaDDL[0], `CREATE INDEX I ON Singers(Nope)`}, "column Nope"},
		{[]string{schemaDDL[0], `DROP TABLE Singers`}, "only CREATE TABLE and CREATE INDEX"},
	} {
		_, err := ddl.Parse(tc.ddl)
		var se *ddl.StatementError
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.ddl, err, tc.want)
			continue
		}
		if !asStatementError(err, &se) || se.Index != len(tc.ddl)-1 {
			t.Errorf("Parse(%q): error %v does not name statement %d", tc.ddl, err, len(tc.ddl)-1)
		}
	}
}

func asStatementError(err error, se **ddl.StatementError) bool {
	return errors.As(err, se)
}

func TestStatementFindsParamsAndTheirColumns(t *testing.T) {
	s, err := ddl.Parse(schemaDDL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql    string
		dml    bool
		params string
		typed  map[string]string
		err    string
	}{
		{sql: `SELECT a.Title, COUNT(*) AS n FROM Albums AS a WHERE a.SingerId = @id AND Sales > @min GROUP BY a.Title ORDER BY n`, params: "id,min", typed: map[string]string{"id": "SingerId", "min": "Sales"}},
		{sql: `INSERT INTO Albums (SingerId, AlbumId, Title) VALUES (@s, @a, @t)`, dml: true, params: "s,a,t", typed: map[string]string{"t": "Title"}},
		{sql: `UPDATE Albums SET Sales = @sales WHERE SingerId = @s AND AlbumId = @a`, dml: true, params: "sales,s,a", typed: map[string]string{"sales": "Sales"}},
		{sql: `DELETE FROM Albums WHERE SingerId = @s`, dml: true, params: "s"},
		{sql: `SELECT Nope FROM Albums`, err: "column Nope is not a column of Albums"},
		{sql: `SELECT 1 FROM Tracks`, err: "table Tracks is not created by the DDL"},
		{sql: `UPDATE Albums SET Nope = 1 WHERE TRUE`, err: "column Nope"},
		{sql: `INSERT INTO Albums (SingerId, Nope) VALUES (1, 2)`, err: "column Nope"},
		{sql: `SELEC 1`, err: "does not parse"},
	} {
		st, err := s.Statement(tc.sql)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Statement(%q) = %v, want an error containing %q", tc.sql, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Statement(%q): %v", tc.sql, err)
			continue
		}
		if st.DML != tc.dml || strings.Join(st.Params, ",") != tc.params {
			t.Errorf("Statement(%q) = DML %v params %v, want DML %v params %s", tc.sql, st.DML, st.Params, tc.dml, tc.params)
		}
		for p, col := range tc.typed {
			if c := st.ParamColumns[p]; c == nil || c.Name != col {
				t.Errorf("Statement(%q): param %s column %+v, want %s", tc.sql, p, c, col)
			}
		}
	}
}
