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
	kind, ok := objectKind(next)
	if !ok {
		return object{}, false
	}
	name, ok := objectName(next)
	if !ok {
		return object{}, false
	}
	return object{kind, name}, true
}

// objectKind reads "[OR REPLACE] [modifiers] KIND" of a CREATE statement.
func objectKind(next func() string) (string, bool) {
	kind := next()
	if kind == "OR" {
		if next() != "REPLACE" {
			return "", false
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
		return kind, true
	case "CHANGE", "PROPERTY", "LOCALITY":
		second := map[string]string{"CHANGE": "STREAM", "PROPERTY": "GRAPH", "LOCALITY": "GROUP"}[kind]
		if next() != second {
			return "", false
		}
		return kind + " " + second, true
	}
	return "", false
}

// objectName reads "[IF NOT EXISTS] name" of a CREATE statement, without
// quotes.
func objectName(next func() string) (string, bool) {
	name := next()
	if name == "IF" {
		if next() != "NOT" || next() != "EXISTS" {
			return "", false
		}
		name = next()
	}
	name = strings.NewReplacer("`", "", `"`, "").Replace(name)
	if name == "" || strings.ContainsAny(name, "(),;") {
		return "", false
	}
	return name, true
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
			i = after(s, i, "\n", 0)
		case strings.HasPrefix(s[i:], "/*"):
			i = after(s, i, "*/", 2)
		case c == '(' || c == ')' || c == ',' || c == ';':
			toks = append(toks, string(c))
			i++
		default:
			end := wordEnd(s, i)
			toks = append(toks, s[i:end])
			i = end
		}
	}
	return toks
}

// after is the index just past the first end found in s from i+skip, or
// len(s) when there is none: the end of a comment.
func after(s string, i int, end string, skip int) int {
	if j := strings.Index(s[i+skip:], end); j >= 0 {
		return i + skip + j + len(end)
	}
	return len(s)
}

// wordEnd is the index just past the word that starts at i: up to a space
// or punctuation, with quoted parts (`...` or "...") kept whole.
func wordEnd(s string, i int) int {
	for i < len(s) && !strings.ContainsRune(" \t\n\r(),;", rune(s[i])) {
		if q := s[i]; q == '`' || q == '"' {
			j := strings.IndexByte(s[i+1:], q)
			if j < 0 {
				return len(s)
			}
			i += j + 2
			continue
		}
		i++
	}
	return i
}
