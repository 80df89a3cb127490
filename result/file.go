package result

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// MaxDocumentBytes bounds a document read from a file or from a runner:
// results are untrusted input.
const MaxDocumentBytes = 64 << 20

// Read decodes a document within FileBudget and checks its schema
// version.
func Read(r io.Reader) (*Document, error) {
	return ReadWithin(r, FileBudget())
}

// ReadWithin decodes a document and checks its schema version. The
// document is untrusted: r is read through a limited reader, and the JSON
// scanned against b before it is decoded, so neither a large input nor a
// small one that decodes into a large heap gets past b.
func ReadWithin(r io.Reader, b Budget) (*Document, error) {
	data, err := io.ReadAll(io.LimitReader(r, b.Bytes+1))
	if err != nil {
		return nil, err
	}
	if err := b.Fits(data); err != nil {
		return nil, err
	}
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("decoding result: %w", err)
	}
	if !KnownSchemaVersion(d.SchemaVersion) {
		return nil, fmt.Errorf("result schema version %q is not %q, %q, %q or %q", d.SchemaVersion, SchemaVersion, SchemaVersionStreams, SchemaVersionSearch, SchemaVersionV1)
	}
	return &d, nil
}

// ReadFile reads a document from a file.
func ReadFile(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// WriteFile writes a document atomically (temporary file, then rename), so
// a crash never leaves a truncated result behind.
func WriteFile(path string, d *Document) error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
