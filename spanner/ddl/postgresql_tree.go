package ddl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/wasilibs/go-pgquery/parser"
)

// libpg_query's parse tree is read from its JSON form (parser.ParseToJSON),
// not as the protobuf messages of github.com/pganalyze/pg_query_go: that
// package registers its protobuf descriptors at init, about 2 MiB of heap
// in every binary linking spanner/ddl, runner pods included, which never
// parse PostgreSQL. The JSON form names a node's type by wrapping it
// (`{"ColumnRef": {...}}`) and its fields by the protobuf fields' JSON
// names, in the protobuf fields' order.

// pgMaxDepth bounds the JSON's nesting as it is decoded, a backstop that
// keeps the recursive decoder and walk bounded whatever the parser writes
// (pgMaxNesting has refused deep statements before their JSON is made).
const pgMaxDepth = 10000

// pgObject is one object of the tree, its fields in the order the parser
// writes them, which is the order a statement's names and parameters are
// met in. Its methods read a missing field (or a nil object) as the zero
// value, as protobuf getters do.
type pgObject struct {
	names  []string
	values []any // *pgObject, []any, string, json.Number or bool
}

// parsePG parses exactly one statement and returns its node: to protobuf
// first, only to measure its nesting (see pgMaxNesting), then to JSON.
func parsePG(text string) (any, error) {
	pb, err := parser.ParseToProtobuf(text)
	if err != nil {
		return nil, fmt.Errorf("does not parse: %s", firstLine(err.Error()))
	}
	if d, _ := wireDepth(pb, pgMaxNesting); d > pgMaxNesting {
		return nil, fmt.Errorf("nests too deeply: its parse tree is more than %d levels deep", pgMaxNesting)
	}
	out, err := parser.ParseToJSON(text)
	if err != nil {
		return nil, fmt.Errorf("does not parse: %s", firstLine(err.Error()))
	}
	tree, err := decodePG(json.NewDecoder(strings.NewReader(out)))
	if err != nil {
		return nil, fmt.Errorf("does not parse: %w", err)
	}
	stmts := tree.list("stmts")
	if len(stmts) != 1 {
		return nil, fmt.Errorf("holds %d statements; give one per item", len(stmts))
	}
	if s, ok := stmts[0].(*pgObject); ok {
		return s.get("stmt"), nil
	}
	return nil, nil
}

// decodePG reads the parser's output into a tree of pgObjects.
func decodePG(dec *json.Decoder) (*pgObject, error) {
	dec.UseNumber()
	v, err := decodePGValue(dec, 0)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*pgObject)
	if !ok {
		return nil, errors.New("the parser's output is not an object")
	}
	return o, nil
}

func decodePGValue(dec *json.Decoder, depth int) (any, error) {
	if depth > pgMaxDepth {
		return nil, fmt.Errorf("nested deeper than %d", pgMaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &pgObject{}
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodePGValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			o.names, o.values = append(o.names, name.(string)), append(o.values, v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := decodePGValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token() // ']'
		return l, err
	}
	return tok, nil
}

func (o *pgObject) get(name string) any {
	if o == nil {
		return nil
	}
	for i, n := range o.names {
		if n == name {
			return o.values[i]
		}
	}
	return nil
}

// obj is a field holding a message: a typed field (RangeVar relation) or
// a Node.
func (o *pgObject) obj(name string) *pgObject {
	v, _ := o.get(name).(*pgObject)
	return v
}

func (o *pgObject) list(name string) []any {
	v, _ := o.get(name).([]any)
	return v
}

func (o *pgObject) str(name string) string {
	v, _ := o.get(name).(string)
	return v
}

func (o *pgObject) boolean(name string) bool {
	v, _ := o.get(name).(bool)
	return v
}

func (o *pgObject) integer(name string) int64 {
	v, _ := o.get(name).(json.Number)
	n, _ := v.Int64()
	return n
}

// pgNode is the message a Node holds and its type: {"ColumnRef": {...}}
// is a ColumnRef. Anything else (a typed field's message, a list, nil) is
// no Node: "" and nil.
func pgNode(v any) (string, *pgObject) {
	o, ok := v.(*pgObject)
	if !ok || o == nil || len(o.names) != 1 || !startsUpper(o.names[0]) {
		return "", nil
	}
	inner, ok := o.values[0].(*pgObject)
	if !ok {
		return "", nil
	}
	return o.names[0], inner
}

// pgNodeOf is v's message if v is a Node of type typ, else nil.
func pgNodeOf(v any, typ string) *pgObject {
	if t, o := pgNode(v); t == typ {
		return o
	}
	return nil
}

// startsUpper tells a Node's type name (ColumnRef, A_Expr) from a field's
// JSON name (relname, targetList), which always starts in lower case.
func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}

// pgFieldTypes are the message types of the fields that hold a message of
// a type the analysis looks at directly, not wrapped in a Node (as
// pg_query.proto declares them; a field of these names holding a Node
// elsewhere is told apart by its wrapping).
var pgFieldTypes = map[string]string{
	"relation":         "RangeVar",
	"rel":              "RangeVar", // SELECT INTO's table
	"alias":            "Alias",
	"join_using_alias": "Alias",
	"larg":             "SelectStmt", // a set operation's sides
	"rarg":             "SelectStmt",
}

// walkPG calls visit on every message of the tree with its type ("" for
// types the analysis does not look at), depth first, fields in order;
// visit returns false to skip a message's children.
func walkPG(v any, typ string, visit func(typ string, o *pgObject) bool) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			walkPG(item, typ, visit)
		}
	case *pgObject:
		if t, inner := pgNode(v); inner != nil {
			walkPG(inner, t, visit)
			return
		}
		if !visit(typ, v) {
			return
		}
		for i, name := range v.names {
			walkPG(v.values[i], pgFieldTypes[name], visit)
		}
	}
}
