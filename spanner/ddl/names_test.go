package ddl_test

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/spanner/ddl"
)

// pgQuotedDDL names its tables, columns and index with quoted mixed-case
// names, which PostgreSQL keeps exactly.
var pgQuotedDDL = []string{
	`CREATE TABLE "Singers" ("SingerId" bigint NOT NULL, "Name" varchar(100), PRIMARY KEY ("SingerId"))`,
	`CREATE TABLE "Albums" ("SingerId" bigint NOT NULL, "AlbumId" bigint NOT NULL, "Title" varchar,
	  PRIMARY KEY ("SingerId", "AlbumId")) INTERLEAVE IN PARENT "Singers" ON DELETE CASCADE`,
	`CREATE INDEX "AlbumsByTitle" ON "Albums" ("Title")`,
}

// TestPostgreSQLStatementsMatchNamesWithCase: in PostgreSQL a statement's
// unquoted name is folded to lower case and then must match the DDL's
// name exactly, so a quoted mixed-case table or column is found only
// quoted; Spanner refuses the others at run time, the check before it.
func TestPostgreSQLStatementsMatchNamesWithCase(t *testing.T) {
	s, err := ddl.ParsePostgreSQL(pgQuotedDDL)
	if err != nil {
		t.Fatalf("ParsePostgreSQL: %v", err)
	}
	if a := s.Table("Albums"); a == nil || a.Parent != "Singers" || strings.Join(a.Key, ",") != "SingerId,AlbumId" {
		t.Fatalf(`"Albums" = %+v, want interleaved in Singers with key SingerId,AlbumId`, a)
	}
	for sql, col := range map[string]string{
		`SELECT "Name" FROM "Singers" WHERE "SingerId" = $1`:                                  "SingerId",
		`SELECT s."Name" AS "N" FROM "Singers" AS s WHERE s."SingerId" = $1 ORDER BY "N"`:     "SingerId",
		`UPDATE "Albums" SET "Title" = $1 WHERE "SingerId" = 1`:                               "Title",
		`INSERT INTO "Albums" ("SingerId", "AlbumId", "Title") VALUES (1, 2, $1)`:             "Title",
		`WITH "Top" AS (SELECT "SingerId" FROM "Albums") SELECT count(*) FROM "Top" LIMIT $1`: "",
	} {
		st, err := s.Statement(sql)
		if err != nil {
			t.Errorf("Statement(%q): %v", sql, err)
			continue
		}
		got := ""
		if c := st.ParamColumns["p1"]; c != nil {
			got = c.Name
		}
		if got != col {
			t.Errorf("Statement(%q): $1 meets column %q, want %q", sql, got, col)
		}
	}
	for sql, want := range map[string]string{
		`SELECT "Name" FROM Singers`:                               `table singers is not created by the DDL (PostgreSQL folds unquoted names to lower case and matches names with case: the table is "Singers")`,
		`SELECT "Name" FROM "SINGERS"`:                             `table SINGERS is not created by the DDL (PostgreSQL folds unquoted names to lower case and matches names with case: the table is "Singers")`,
		`SELECT name FROM "Singers"`:                               `column name is not a column of Singers (PostgreSQL folds unquoted names to lower case and matches names with case: the column is "Name")`,
		`SELECT "Name" FROM "Singers" WHERE SingerId = $1`:         `column singerid is not a column of Singers (`,
		`UPDATE "Albums" SET title = $1`:                           `column title is not a column of Albums (`,
		`INSERT INTO "Albums" ("SingerId", albumid) VALUES (1, 2)`: `column albumid is not a column of Albums (`,
		`SELECT "Name" AS "N" FROM "Singers" ORDER BY n`:           `column n is not a column of Singers`,
		`WITH "Top" AS (SELECT 1) SELECT * FROM top`:               `table top is not created by the DDL`,
	} {
		if _, err := s.Statement(sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Statement(%q) = %v, want an error containing %q", sql, err, want)
		}
	}
}

// TestPostgreSQLDDLMatchesNamesWithCase: the DDL's own references (primary
// key, INTERLEAVE IN PARENT, CREATE INDEX) match with case too, and names
// that differ only in case are one name to Spanner ("Duplicate name in
// schema"), in either dialect.
func TestPostgreSQLDDLMatchesNamesWithCase(t *testing.T) {
	for _, tc := range []struct {
		ddl  []string
		want string
	}{
		{[]string{pgQuotedDDL[0], `CREATE TABLE a ("SingerId" bigint NOT NULL, PRIMARY KEY ("SingerId")) INTERLEAVE IN PARENT Singers`},
			`table a: is interleaved in singers, which no earlier statement creates (PostgreSQL folds unquoted names to lower case and matches names with case: the table is "Singers")`},
		{[]string{pgQuotedDDL[0], `CREATE INDEX i ON Singers ("Name")`}, `index i: table singers is not created by an earlier statement (`},
		{[]string{pgQuotedDDL[0], `CREATE INDEX i ON "Singers" (name)`}, `index i: column name is not a column of table Singers (`},
		{[]string{`CREATE TABLE "T" ("K" bigint, PRIMARY KEY (k))`}, `table T: primary key column k is not a column of the table (`},
		{[]string{pgQuotedDDL[0], `CREATE TABLE singers (singer_id bigint PRIMARY KEY)`},
			`table singers: table Singers has this name (Spanner's names must differ in more than case)`},
		{[]string{pgQuotedDDL[0], `CREATE INDEX "SINGERS" ON "Singers" ("Name")`}, `index SINGERS: table Singers has this name`},
		{[]string{`CREATE TABLE t (k bigint PRIMARY KEY, "A" varchar, a varchar)`}, `table t: column a: column A has this name`},
		{[]string{pgQuotedDDL[0], pgQuotedDDL[0]}, `table Singers is created twice`},
	} {
		_, err := ddl.ParsePostgreSQL(tc.ddl)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePostgreSQL(%q) = %v, want an error containing %q", tc.ddl, err, tc.want)
		}
	}
	for _, tc := range []struct {
		ddl  []string
		want string
	}{
		{[]string{schemaDDL[0], `CREATE TABLE SINGERS (K INT64) PRIMARY KEY (K)`}, `table SINGERS is created twice`},
		{[]string{schemaDDL[0], `CREATE INDEX singers ON Singers (Name)`}, `index singers: table Singers has this name`},
		{[]string{`CREATE TABLE T (K INT64, a STRING(1), A STRING(1)) PRIMARY KEY (K)`}, `table T: column A is defined twice`},
	} {
		_, err := ddl.Parse(tc.ddl)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.ddl, err, tc.want)
		}
	}
}

// TestGoogleSQLNamesStayCaseInsensitive: GoogleSQL's names match without
// regard to case, in the DDL and in statements.
func TestGoogleSQLNamesStayCaseInsensitive(t *testing.T) {
	s, err := ddl.Parse([]string{schemaDDL[0], `CREATE TABLE albums (singerid INT64, albumid INT64) PRIMARY KEY (SINGERID, AlbumId), INTERLEAVE IN PARENT SINGERS`})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if a := s.Table("ALBUMS"); a == nil || a.Parent != "Singers" || strings.Join(a.Key, ",") != "singerid,albumid" {
		t.Errorf("albums = %+v, want interleaved in Singers with key singerid,albumid (as the columns are named)", a)
	}
	if _, err := s.Statement(`SELECT NAME FROM singers s WHERE S.singerid = @id`); err != nil {
		t.Errorf("a GoogleSQL statement naming a table and column in another case: %v", err)
	}
}

func TestPostgreSQLNameQuotesWhatFoldingWouldChange(t *testing.T) {
	for name, want := range map[string]string{
		"singers":   "singers",
		"album_2":   "album_2",
		"Singers":   `"Singers"`,
		"2fast":     `"2fast"`,
		`say "hi"`:  `"say ""hi"""`,
		"Spanbench": `"Spanbench"`,
	} {
		if got := ddl.PostgreSQLName(name); got != want {
			t.Errorf("PostgreSQLName(%q) = %s, want %s", name, got, want)
		}
	}
}
