package serverstats_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	sppb "cloud.google.com/go/spanner/apiv1/spannerpb"
	"google.golang.org/api/iterator"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/statstest"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// sqlTypes are the documented types of the result columns' type codes.
var sqlTypes = map[sppb.TypeCode]serverstats.SQLType{sppb.TypeCode_TIMESTAMP: serverstats.Timestamp,
	sppb.TypeCode_STRING: serverstats.String, sppb.TypeCode_INT64: serverstats.Int64, sppb.TypeCode_FLOAT64: serverstats.Float64,
	sppb.TypeCode_BOOL: serverstats.Bool, sppb.TypeCode_BYTES: serverstats.Bytes}

// sqlType is the documented type a result column of type ty has.
func sqlType(ty *sppb.Type) serverstats.SQLType {
	if ty.GetCode() == sppb.TypeCode_ARRAY && ty.GetArrayElementType().GetCode() == sppb.TypeCode_STRING {
		return serverstats.StringArray
	}
	if t, ok := sqlTypes[ty.GetCode()]; ok {
		return t
	}
	return serverstats.SQLType(ty.String())
}

// resultColumns are the columns (name: type) a query of table returns, in
// order, as the database describes them.
func resultColumns(t *testing.T, client *spanner.Client, table string) []string {
	t.Helper()
	it := client.Single().Query(context.Background(), spanner.Statement{SQL: "SELECT * FROM " + table + " LIMIT 0"})
	defer it.Stop()
	for {
		if _, err := it.Next(); errors.Is(err, iterator.Done) {
			break
		} else if err != nil {
			t.Fatalf("describing %s: %v", table, err)
		}
	}
	var out []string
	for _, f := range it.Metadata.GetRowType().GetFields() {
		out = append(out, strings.ToUpper(f.GetName())+": "+string(sqlType(f.GetType())))
	}
	return out
}

// TestStandInsAreTheDocumentedTables: the stand-in tables the emulator
// holds have exactly the documented columns, in the documented order and
// types, in both dialects (less the ARRAY<STRUCT> columns no DDL can
// declare): the stand-ins are built from the collector's table of
// Google's pages, not from a second list.
func TestStandInsAreTheDocumentedTables(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) {
			client := startStandin(t, d)
			for _, g := range statstest.Granularities {
				for _, ts := range serverstats.DocumentedTables() {
					var want []string
					for _, c := range ts.Columns {
						if c.Type != serverstats.StructArray {
							want = append(want, c.Name+": "+string(c.Type))
						}
					}
					if got := resultColumns(t, client, ts.Table(statstest.Prefix, g)); !slices.Equal(got, want) {
						t.Errorf("%s stand-in columns\n got %q\nwant %q (%s)", ts.Table(statstest.Prefix, g), got, want, ts.Source)
					}
				}
			}
		})
	}
}

// TestCollectToleratesAbsentColumns: a database whose statistics tables
// lack documented columns is read all the same. A figure the absent
// column holds is not captured (absent, never zero) and said to be, the
// other figures stand; a table that lacks a column its rows need (here
// READ_STATS's REQUEST_TAG) is not read and its shapes read as not
// captured, the other tables are read.
func TestCollectToleratesAbsentColumns(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) { checkAbsentColumns(t, d) })
	}
}

func checkAbsentColumns(t *testing.T, d v1alpha1.Dialect) {
	schema := statstest.NewSchema(d).Without("QUERY_STATS_TOP.AVG_REMOTE_SERVER_CALLS",
		"TXN_STATS_TOP.TOTAL_LATENCY_DISTRIBUTION_JSON_STRING", "READ_STATS_TOP.REQUEST_TAG")
	client := startStandinSchema(t, schema)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sqlTag, txnTag := v1alpha1.RequestTag("seed", "readkeys-sql"), v1alpha1.RequestTag("seed", "update")
	dist := &statstest.Distribution{Finite: 10, Growth: 2, Scale: 0.001, Mean: 0.012, Counts: []int64{0, 0, 0, 0, 100}}
	if _, err := client.Apply(ctx, schema.Mutations(
		statstest.QueryRow{End: m1, Tag: sqlTag, Fprint: 1, Executions: 100, Latency: 0.002, CPU: sqlCPU, Rows: 10,
			Scanned: 10, Bytes: 10391, Remote: 4, Dist: dist},
		statstest.ReadRow{End: m1, Tag: v1alpha1.RequestTag("seed", "readkeys-read"), Fprint: 2, Executions: 400, CPU: readCPU},
		statstest.TxnRow{End: m1, Tag: txnTag, Fprint: 3, Attempts: 100, Commits: 100, CommitLatency: 0.01, Dist: dist},
	)); err != nil {
		t.Fatalf("filling the stand-in tables: %v", err)
	}
	c := serverstats.Collector{Prefix: standinPrefix, Dialect: d, Clock: clocktesting.NewFakePassiveClock(minute(5))}
	res, err := c.Collect(ctx, client, serverstats.Window{Start: minute(0), End: m1}, []serverstats.Operation{
		{Name: "sql", RequestTag: sqlTag, Ops: perMinute(100, m1)},
		{Name: "read", RequestTag: v1alpha1.RequestTag("seed", "readkeys-read"), Ops: perMinute(100, m1)},
		{Name: "update", TransactionTag: txnTag, Ops: perMinute(100, m1)},
	})
	if err != nil {
		t.Fatalf("collecting from tables that lack documented columns: %v, want the run's figures and a note", err)
	}
	want := []string{"QUERY_STATS_TOP_MINUTE.AVG_REMOTE_SERVER_CALLS", "READ_STATS_TOP_MINUTE.REQUEST_TAG",
		"TXN_STATS_TOP_MINUTE.TOTAL_LATENCY_DISTRIBUTION_JSON_STRING"}
	if !slices.Equal(res.Absent, want) {
		t.Errorf("absent = %q, want %q", res.Absent, want)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, n := range []string{"QUERY_STATS_TOP_MINUTE lacks AVG_REMOTE_SERVER_CALLS", "remote server calls not captured",
		"READ_STATS_TOP_MINUTE lacks REQUEST_TAG", "it was not read", "transaction latency percentiles not captured"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes %q do not say %q", res.Notes, n)
		}
	}
	sql, read, txn := res.Operations[0].Statements, res.Operations[1], res.Operations[2].Transactions
	if sql == nil || txn == nil {
		t.Fatalf("the query's and the transaction's rows were not read: %+v", res.Operations)
	}
	near(t, "sql: CPU per operation (a column the table has)", sql.CPUSecondsPerOp, sqlCPU)
	near(t, "sql: latency p50 (a column the table has)", sql.LatencyP50Seconds, 0.012)
	if sql.RemoteServerCallsPerExecution != nil {
		t.Errorf("remote server calls = %g from an absent column, want not captured", *sql.RemoteServerCallsPerExecution)
	}
	near(t, "update: commit latency (a column the table has)", txn.CommitLatencySeconds, 0.01)
	if txn.TotalLatencyP99Seconds != nil {
		t.Errorf("transaction p99 = %g from an absent column, want not captured", *txn.TotalLatencyP99Seconds)
	}
	if read.Statements != nil || len(read.NotCaptured) == 0 {
		t.Errorf("the read's table lacks its tag column: want not captured, got %+v", read)
	}
}

// TestCollectNotesAMissingTableAndFailsWithoutAny: a database that lacks
// one statistics table (here LOCK_STATS_TOP_*) is read all the same, the
// missing table named; one with none of them (a wrong database or prefix)
// fails with the database's own answer, which the manager reports as
// StatisticsNotFound.
func TestCollectNotesAMissingTableAndFailsWithoutAny(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) {
			client := startStandinSchema(t, statstest.NewSchema(d).Without("LOCK_STATS_TOP"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			txnTag := v1alpha1.RequestTag("seed", "update")
			if _, err := client.Apply(ctx, []*spanner.Mutation{statstest.TxnRow{End: m1, Tag: txnTag, Fprint: 3, Attempts: 100,
				Commits: 100, CommitLatency: 0.01}.Mutation()}); err != nil {
				t.Fatalf("filling the stand-in tables: %v", err)
			}
			ops := []serverstats.Operation{{Name: "update", TransactionTag: txnTag, Ops: perMinute(100, m1)}}
			c := serverstats.Collector{Prefix: standinPrefix, Dialect: d, Clock: clocktesting.NewFakePassiveClock(minute(5))}
			res, err := c.Collect(ctx, client, serverstats.Window{Start: minute(0), End: m1}, ops)
			if err != nil {
				t.Fatalf("collecting without the lock table: %v, want the other tables' figures", err)
			}
			if res.Operations[0].Transactions == nil || !slices.Equal(res.Absent, []string{"LOCK_STATS_TOP_MINUTE"}) ||
				!strings.Contains(strings.Join(res.Notes, "\n"), "LOCK_STATS_TOP_MINUTE does not exist") {
				t.Errorf("transactions %+v, absent %q, notes %q; want the transactions read and the lock table named",
					res.Operations[0].Transactions, res.Absent, res.Notes)
			}
			c.Prefix = "NOPE_"
			if _, err := c.Collect(ctx, client, serverstats.Window{Start: minute(0), End: m1}, ops); err == nil ||
				!strings.Contains(err.Error(), "does not exist") {
				t.Errorf("collecting from no statistics table at all: %v, want the database's answer", err)
			}
		})
	}
}
