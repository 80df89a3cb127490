package ddl

import "google.golang.org/protobuf/encoding/protowire"

// pgMaxNesting bounds how deeply a statement's parse tree may nest, in
// protobuf messages (a Node and the message it holds are two). The
// WebAssembly build of libpg_query writes its JSON output recursively on
// a small stack: a statement nesting a few hundred expressions deep
// (`SELECT (SELECT (SELECT ...` 250 times, 2 KB of text) makes it fault
// (`wasm error: out of bounds memory access`, a panic) or spin forever,
// where its protobuf output, which is written with less stack, is still
// fine. So a statement is parsed to protobuf first, and one nesting
// deeper than this is refused before its JSON is asked for.
const pgMaxNesting = 400

// wireDepth is how deeply the protobuf message b nests messages, counting
// b itself, or ok false if b is no message. It reads the wire format
// without the schema, so a string field that happens to be a valid
// message counts as one (which only errs towards refusing); it stops
// counting past limit, so its work is bounded by len(b)·limit.
func wireDepth(b []byte, limit int) (depth int, ok bool) {
	deepest := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, false
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, false
			}
			b = b[n:]
			if limit > 0 {
				if d, ok := wireDepth(v, limit-1); ok && d > deepest {
					deepest = d
				}
			}
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return 0, false
		}
		b = b[n:]
	}
	return deepest + 1, true
}
