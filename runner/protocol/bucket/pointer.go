package bucket

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Keys of a pointer in a ConfigMap's data.
const (
	// KeyObject is the object's key in the results bucket.
	KeyObject = "resultObject"
	// KeyObjectBytes is the object's length in bytes.
	KeyObjectBytes = "resultObjectBytes"
	// KeyObjectSHA256 is the object's sha256, in hex.
	KeyObjectSHA256 = "resultObjectSHA256"
)

// PointerKeys are the keys a pointer adds to a ConfigMap's data.
func PointerKeys() []string { return []string{KeyObject, KeyObjectBytes, KeyObjectSHA256} }

// Pointer is what a ConfigMap records of a result stored as an object.
type Pointer struct {
	// Key is the object's key.
	Key string
	// Bytes is its length.
	Bytes int64
	// SHA256 is its sha256, hex.
	SHA256 string
}

// Data is p as a ConfigMap's data holds it.
func (p Pointer) Data() map[string]string {
	return map[string]string{
		KeyObject:       p.Key,
		KeyObjectBytes:  strconv.FormatInt(p.Bytes, 10),
		KeyObjectSHA256: p.SHA256,
	}
}

// maxKeyBytes bounds a key: the longest RunPrefix (a 63-character
// namespace, a run name of at most 63, a 36-character UID) and a shard's
// name are far shorter.
const maxKeyBytes = 256

// DecodePointer reads a pointer from a ConfigMap's data; ok is false when
// the data hold none (none of PointerKeys). The data are untrusted: a
// pointer with a key missing, a length out of [0, maxBytes] or a
// malformed hash is an error naming the key. Whether the key is the one
// the reader expects is the reader's to check.
func DecodePointer(data map[string]string, maxBytes int64) (p Pointer, ok bool, err error) {
	present := 0
	for _, k := range PointerKeys() {
		if _, has := data[k]; has {
			present++
		}
	}
	switch {
	case present == 0:
		return Pointer{}, false, nil
	case present < len(PointerKeys()):
		return Pointer{}, true, fmt.Errorf("a result object's pointer needs keys %v; it has only some", PointerKeys())
	}
	p = Pointer{Key: data[KeyObject], SHA256: data[KeyObjectSHA256]}
	if p.Key == "" || len(p.Key) > maxKeyBytes {
		return Pointer{}, true, fmt.Errorf("key %q: %.80q is not an object key of at most %d bytes", KeyObject, p.Key, maxKeyBytes)
	}
	p.Bytes, err = strconv.ParseInt(data[KeyObjectBytes], 10, 64)
	if err != nil || p.Bytes < 0 || p.Bytes > maxBytes {
		return Pointer{}, true, fmt.Errorf("key %q: %.32q is not a length from 0 to %d", KeyObjectBytes, data[KeyObjectBytes], maxBytes)
	}
	if b, err := hex.DecodeString(p.SHA256); err != nil || len(b) != sha256.Size || strings.ToLower(p.SHA256) != p.SHA256 {
		return Pointer{}, true, fmt.Errorf("key %q: %.80q is not a sha256 in hex", KeyObjectSHA256, p.SHA256)
	}
	return p, true, nil
}
