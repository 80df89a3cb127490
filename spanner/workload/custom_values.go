package workload

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"time"

	"cloud.google.com/go/civil"
	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/ddl"
)

// customEpoch dates generated timestamps without a range: row k of a
// table is k seconds after it.
var customEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// defaultStringLength is the length of a STRING or BYTES value without a
// generator.
const defaultStringLength = 16

// columnGen produces one column's (or parameter's) values.
type columnGen struct {
	// col is the column, or nil for a parameter compared with none.
	col *ddl.Column
	// spec is the generator given, or nil: one follows from the type.
	spec *v1alpha1.GeneratorSpec
	key  bool
	// inherited is the parent's column index a child's key column copies,
	// or -1.
	inherited int
	// ref and refCol are what a Reference draws from.
	ref    *customTable
	refCol int
	// zipf draws Zipfian values.
	zipf *zipfian
	now  func() time.Time
	// pg writes NUMERIC and JSON values as PostgreSQL's numeric and
	// jsonb, which the Go client types apart from GoogleSQL's.
	pg bool
}

// resolve binds a Reference generator to its table, and prepares a
// Zipfian one.
func (g *columnGen) resolve(s *customSchema) error {
	if g.spec == nil {
		return nil
	}
	switch g.spec.Type {
	case v1alpha1.GenReference:
		g.ref = s.table(g.spec.Reference.Table)
		if g.ref == nil || g.ref.rows == 0 {
			return fmt.Errorf("a Reference to %s needs that table to hold rows", g.spec.Reference.Table)
		}
		g.refCol = g.ref.columnIndex(g.spec.Reference.Column)
	case v1alpha1.GenZipfian:
		g.zipf = newZipfian(*g.spec.Max - *g.spec.Min + 1)
	}
	return nil
}

// value draws a value; local is the row's index (within its parent, for
// an interleaved table), which a Sequence counts.
func (g *columnGen) value(rng *rand.Rand, local int64) any {
	if g.spec != nil && g.spec.NullPercent != nil && rng.IntN(100) < int(*g.spec.NullPercent) {
		return g.null()
	}
	if g.spec == nil {
		return g.byType(rng, local)
	}
	s := g.spec
	switch s.Type {
	case v1alpha1.GenSequence:
		return g.number(*orZero(s.Min) + local)
	case v1alpha1.GenUniform:
		return g.number(*s.Min + rng.Int64N(*s.Max-*s.Min+1))
	case v1alpha1.GenZipfian:
		return g.number(*s.Min + g.zipf.next(rng))
	case v1alpha1.GenString:
		return randomText(rng, length(rng, s))
	case v1alpha1.GenBytes:
		return []byte(randomText(rng, length(rng, s)))
	case v1alpha1.GenUUID:
		return uuid(rng)
	case v1alpha1.GenTimestamp:
		return g.timestamp(rng, local)
	case v1alpha1.GenChoice:
		return g.choice(rng)
	case v1alpha1.GenReference:
		return g.ref.loadedValue(g.refCol, rng.Int64N(g.ref.rows))
	}
	return nil
}

func orZero(p *int64) *int64 {
	if p == nil {
		return new(int64)
	}
	return p
}

func length(rng *rand.Rand, s *v1alpha1.GeneratorSpec) int {
	lo, hi := 0, int(*s.MaxLength)
	if s.MinLength != nil {
		lo = int(*s.MinLength)
	}
	return lo + rng.IntN(hi-lo+1)
}

// number is an integer as the column's type holds it.
func (g *columnGen) number(v int64) any {
	if g.col == nil {
		return v
	}
	switch g.col.Type {
	case "FLOAT64":
		return float64(v)
	case "FLOAT32":
		return float32(v)
	case "NUMERIC":
		if g.pg {
			return spanner.PGNumeric{Numeric: strconv.FormatInt(v, 10), Valid: true}
		}
		return big.NewRat(v, 1)
	case "STRING":
		return strconv.FormatInt(v, 10)
	}
	return v
}

func (g *columnGen) timestamp(rng *rand.Rand, local int64) any {
	ts := g.spec.Timestamp
	switch ts.Mode {
	case v1alpha1.TimestampCommit:
		return spanner.CommitTimestamp
	case v1alpha1.TimestampRange:
		from, _ := time.Parse(time.RFC3339Nano, ts.From)
		to, _ := time.Parse(time.RFC3339Nano, ts.To)
		return from.Add(time.Duration(rng.Int64N(int64(to.Sub(from)) + 1)))
	}
	if g.now != nil {
		return g.now()
	}
	return customEpoch.Add(time.Duration(local) * time.Second)
}

func (g *columnGen) choice(rng *rand.Rand) any {
	var total int64
	for _, c := range g.spec.Choices {
		total += int64(c.Weight)
	}
	pick := rng.Int64N(total)
	for _, c := range g.spec.Choices {
		if pick < int64(c.Weight) {
			return g.parse(c.Value)
		}
		pick -= int64(c.Weight)
	}
	return nil
}

// parse converts a choice's text to the column's type (validated before).
func (g *columnGen) parse(text string) any {
	if g.col == nil {
		return text
	}
	switch g.col.Type {
	case "INT64":
		v, _ := strconv.ParseInt(text, 10, 64)
		return v
	case "FLOAT64":
		v, _ := strconv.ParseFloat(text, 64)
		return v
	case "BOOL":
		v, _ := strconv.ParseBool(text)
		return v
	case "TIMESTAMP":
		v, _ := time.Parse(time.RFC3339Nano, text)
		return v
	case "DATE":
		v, _ := civil.ParseDate(text)
		return v
	case "BYTES":
		return []byte(text)
	}
	return text
}

// byType is the value of a column without a generator: a key counts
// rows, other columns get a random value of their type.
func (g *columnGen) byType(rng *rand.Rand, local int64) any {
	if g.col == nil || g.col.Array {
		return nil
	}
	switch g.col.Type {
	case "INT64", "FLOAT64", "FLOAT32", "NUMERIC":
		if g.key {
			return g.number(local)
		}
		return g.number(rng.Int64N(1_000_000))
	case "STRING":
		if g.key {
			return strconv.FormatInt(local, 10)
		}
		return randomText(rng, defaultStringLength)
	case "BYTES":
		return []byte(randomText(rng, defaultStringLength))
	case "BOOL":
		return rng.IntN(2) == 1
	case "TIMESTAMP":
		if g.col.CommitTimestamp && !g.key {
			return spanner.CommitTimestamp
		}
		return customEpoch.Add(time.Duration(local) * time.Second)
	case "DATE":
		return civil.DateOf(customEpoch.Add(time.Duration(local) * 24 * time.Hour))
	case "JSON":
		if g.pg {
			return spanner.PGJsonB{Value: map[string]any{}, Valid: true}
		}
		return spanner.NullJSON{Value: map[string]any{}, Valid: true}
	}
	return nil
}

// null is the column's NULL, typed so that it can also be a statement
// parameter.
func (g *columnGen) null() any {
	typ := ""
	if g.col != nil {
		typ = g.col.Type
	}
	switch typ {
	case "INT64":
		return spanner.NullInt64{}
	case "FLOAT64":
		return spanner.NullFloat64{}
	case "BOOL":
		return spanner.NullBool{}
	case "BYTES":
		return []byte(nil)
	case "TIMESTAMP":
		return spanner.NullTime{}
	case "DATE":
		return spanner.NullDate{}
	case "NUMERIC":
		if g.pg {
			return spanner.PGNumeric{}
		}
		return spanner.NullNumeric{}
	case "JSON":
		if g.pg {
			return spanner.PGJsonB{}
		}
		return spanner.NullJSON{}
	}
	return spanner.NullString{}
}

// uuid is a version 4 UUID drawn from rng, so that a row's UUIDs are the
// same in every load.
func uuid(rng *rand.Rand) string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
