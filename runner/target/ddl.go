package target

import "strings"

// object identifies a schema object by kind and name, both upper-cased
// because Spanner's GoogleSQL names are case-insensitive: a table created
// as usertable and read back as UserTable is the same table.
type object struct{ kind, name string }

// createdObject returns the object that a CREATE statement creates, as
// "CREATE [OR REPLACE] [modifiers] KIND [IF NOT EXISTS] name ...". ok is
// false for any other statement, and for a CREATE without a name (CREATE
// PROTO BUNDLE), so that the caller never guesses.
func createdObject(stmt string) (o object, ok bool) {
	toks := tokens(stmt, 8)
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return strings.ToUpper(toks[i-1])
	}
	if next() != "CREATE" {
		return object{}, false
	}
	kind := next()
	if kind == "OR" {
		if next() != "REPLACE" {
			return object{}, false
		}
		kind = next()
	}
	// Index variants share the index namespace: UNIQUE, NULL_FILTERED (in
	// either order), SEARCH and VECTOR indexes are all "INDEX".
	for kind == "UNIQUE" || kind == "NULL_FILTERED" || kind == "SEARCH" || kind == "VECTOR" {
		kind = next()
	}
	switch kind {
	case "TABLE", "INDEX", "VIEW", "SEQUENCE", "ROLE", "MODEL", "SCHEMA", "PLACEMENT":
	case "CHANGE", "PROPERTY", "LOCALITY":
		second := map[string]string{"CHANGE": "STREAM", "PROPERTY": "GRAPH", "LOCALITY": "GROUP"}[kind]
		if next() != second {
			return object{}, false
		}
		kind += " " + second
	default:
		return object{}, false
	}
	name := next()
	if name == "IF" {
		if next() != "NOT" || next() != "EXISTS" {
			return object{}, false
		}
		name = next()
	}
	name = strings.NewReplacer("`", "", `"`, "").Replace(name)
	if name == "" || strings.ContainsAny(name, "(),;") {
		return object{}, false
	}
	return object{kind, name}, true
}

// tokens splits the start of a DDL statement into at most limit words,
// skipping comments (--, # and /* */). Parentheses, commas and semicolons
// end a word and are tokens of their own; a quoted identifier (`...` or
// "...") stays inside its word, so `my table` and `s`.`t` are one word each.
func tokens(s string, limit int) []string {
	var toks []string
	for i := 0; i < len(s) && len(toks) < limit; {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "--") || c == '#':
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
		case strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
		case c == '(' || c == ')' || c == ',' || c == ';':
			toks = append(toks, string(c))
			i++
		default:
			start := i
			for i < len(s) && !strings.ContainsRune(" \t\n\r(),;", rune(s[i])) {
				if q := s[i]; q == '`' || q == '"' {
					if j := strings.IndexByte(s[i+1:], q); j >= 0 {
						i += j + 2
						continue
					}
					i = len(s)
					break
				}
				i++
			}
			toks = append(toks, s[start:i])
		}
	}
	return toks
}
