package protocol

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// MaxMessageBytes bounds a report's message: the controller copies it into
// a condition. EncodeLoaderReport and EncodeShardReport cut a longer one;
// the decoders refuse it.
const MaxMessageBytes = 2048

// LoaderReport is what loader i writes in its ConfigMap as it loads its
// slice, [from, to) of SliceBounds.
type LoaderReport struct {
	// State is Loading, then Succeeded or Failed (a retried loader is
	// Loading again).
	State State
	// Message says why the loader failed.
	Message string
	// Loaded is the rows of its slice loaded so far.
	Loaded int64
	// ResumeFrom is a row below which every row of the slice is loaded:
	// a retry starts there.
	ResumeFrom int64
	// Retries counts the attempts the Job started after a failed one.
	Retries int32
	// ResumedAt is the row the latest retry started at.
	ResumedAt int64
}

// ShardReport is what runner i writes in its ConfigMap.
type ShardReport struct {
	// Ready is when the runner was connected and ready to start; zero
	// before.
	Ready time.Time
	// State is Succeeded or Failed at the end, none before.
	State State
	// Message says why the runner failed.
	Message string
	// Result is the shard's result as EncodeResult made it, inline,
	// present with Succeeded when it fits MaxResultBytes. It is kept
	// encoded: only the aggregation decodes it (DecodeResult), once.
	Result []byte
	// Chunked describes the shard's result stored in chunks instead
	// (StoreResult), present with Succeeded when the result is longer;
	// the aggregation reads it (LoadChunked).
	Chunked *chunks.Head
	// Object points at the shard's result stored in the results bucket
	// instead (StoreResultObject), present with Succeeded when the
	// manager has a results bucket; the aggregation reads it
	// (LoadObject).
	Object *bucket.Pointer
	// Live is the runner's latest live report (KeyLive) as
	// EncodeLiveReport made it, written while it runs; read only (a
	// report's encoding leaves it out), kept encoded and only checked for its size,
	// so that a bad one costs the run its live figures, never the shard
	// (the manager decodes it: DecodeLiveReport).
	Live string
	// Search is the runner's report of its latest capacity search step
	// (EncodeSearchReport), kept encoded like Live; the manager decodes
	// it (DecodeSearchReport).
	Search string
}

// Maps is the content of a report's ConfigMap, data and binaryData. Its
// JSON is a merge patch of the ConfigMap, which is how pods write it: a
// merge patch needs no resourceVersion, so it cannot conflict with the
// controller's writes (labels, owner references).
type Maps struct {
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

// EncodeLoaderReport is r as its ConfigMap holds it. Every key is written,
// so a report replaces the one before it whole.
func EncodeLoaderReport(r LoaderReport) Maps {
	return Maps{Data: map[string]string{
		KeyVersion:    strconv.Itoa(Version),
		KeyState:      string(r.State),
		KeyMessage:    truncate(r.Message, MaxMessageBytes),
		KeyLoaded:     strconv.FormatInt(r.Loaded, 10),
		KeyResumeFrom: strconv.FormatInt(r.ResumeFrom, 10),
		KeyRetries:    strconv.FormatInt(int64(r.Retries), 10),
		KeyResumedAt:  strconv.FormatInt(r.ResumedAt, 10),
	}}
}

// DecodeLoaderReport reads a loader ConfigMap's data. An empty map (the
// loader has not reported yet) is the zero report; anything a loader could
// not have written is a *DecodeError.
func DecodeLoaderReport(data map[string]string) (LoaderReport, error) {
	d := decoder{data: data}
	d.known(LoaderKeys())
	d.version()
	r := LoaderReport{
		State:      d.state(StateLoading, StateSucceeded, StateFailed),
		Message:    d.message(),
		Loaded:     d.count(KeyLoaded, 63),
		ResumeFrom: d.count(KeyResumeFrom, 63),
		Retries:    int32(d.count(KeyRetries, 31)),
		ResumedAt:  d.count(KeyResumedAt, 63),
	}
	return r, d.err
}

// EncodeShardReport is r as its ConfigMap holds it. Every data key is
// written, so a report replaces the one before it whole; the result only
// when there is one (a shard's result is final). The live report is not
// among them: EncodeLiveReport writes it alone, and a report leaves it in
// place.
func EncodeShardReport(r ShardReport) Maps {
	m := Maps{Data: map[string]string{
		KeyVersion: strconv.Itoa(Version),
		KeyReady:   "",
		KeyState:   string(r.State),
		KeyMessage: truncate(r.Message, MaxMessageBytes),
	}}
	if !r.Ready.IsZero() {
		m.Data[KeyReady] = formatTime(r.Ready)
	}
	if r.Result != nil {
		m.BinaryData = map[string][]byte{KeyResult: r.Result}
	}
	if r.Chunked != nil {
		maps.Copy(m.Data, r.Chunked.Data())
	}
	if r.Object != nil {
		maps.Copy(m.Data, r.Object.Data())
	}
	return m
}

// DecodeShardReport reads a shard ConfigMap's data and binaryData. The
// result is only checked for its size, or its chunks' head, not decoded:
// see ShardReport.Result.
func DecodeShardReport(data map[string]string, binaryData map[string][]byte) (ShardReport, error) {
	d := decoder{data: data}
	d.known(ShardKeys())
	d.version()
	r := ShardReport{State: d.state(StateSucceeded, StateFailed), Message: d.message(), Live: data[KeyLive], Search: data[KeySearchReport]}
	if len(r.Live) > MaxLiveBytes {
		d.fail(KeyLive, "", fmt.Sprintf("is %d bytes, more than %d", len(r.Live), MaxLiveBytes))
	}
	if len(r.Search) > MaxSearchReportBytes {
		d.fail(KeySearchReport, "", fmt.Sprintf("is %d bytes, more than %d", len(r.Search), MaxSearchReportBytes))
	}
	if s := data[KeyReady]; s != "" && d.err == nil {
		r.Ready, d.err = parseTime(KeyReady, s)
	}
	for k, v := range binaryData {
		switch {
		case d.err != nil:
		case k != KeyResult:
			d.fail(k, "", "is not a key of the protocol")
		case len(v) > MaxResultBytes:
			d.fail(k, "", fmt.Sprintf("is %d bytes, more than the %d a result may take", len(v), MaxResultBytes))
		default:
			r.Result = v
		}
	}
	if d.err == nil {
		r.Chunked, d.err = chunkedResult(data, r.Result != nil)
	}
	if d.err == nil {
		r.Object, d.err = objectResult(data, r.Result != nil || r.Chunked != nil)
	}
	return r, d.err
}

// objectResult reads the pointer to a result object, if the data record
// one; a report holding a result another way too is refused.
func objectResult(data map[string]string, other bool) (*bucket.Pointer, error) {
	p, ok, err := bucket.DecodePointer(data, ShardLimits().MaxObjectBytes())
	switch {
	case err != nil:
		return nil, &DecodeError{Key: bucket.KeyObject, Problem: "does not point at a result object: " + err.Error()}
	case ok && other:
		return nil, &DecodeError{Key: bucket.KeyObject, Problem: "is present with a result stored another way: a result is stored one way"}
	case !ok:
		return nil, nil
	}
	return &p, nil
}

// chunkedResult reads the head of a chunked result, if the data record
// one; a report holding a result both inline and in chunks is refused.
func chunkedResult(data map[string]string, inline bool) (*chunks.Head, error) {
	h, ok, err := chunks.DecodeHead(data, chunks.MaxShardChunks)
	switch {
	case err != nil:
		return nil, &DecodeError{Key: chunks.KeyChunks, Problem: "does not describe a chunked result: " + err.Error()}
	case ok && inline:
		return nil, &DecodeError{Key: KeyResult, Problem: "is present with a chunked result's head: a result is stored one way"}
	case !ok:
		return nil, nil
	}
	return &h, nil
}

// DecodeError says a ConfigMap of the protocol holds what its writer could
// not have written: an unknown key, another version, a value that does not
// parse. It names the key.
type DecodeError struct {
	// Key is the offending key; Value its value (shortened), if it is text.
	Key, Value string
	// Problem says what is wrong with it.
	Problem string
}

func (e *DecodeError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("key %q %s", e.Key, e.Problem)
	}
	return fmt.Sprintf("key %q: %q %s", e.Key, e.Value, e.Problem)
}

// decoder reads a map's keys, keeping the first error.
type decoder struct {
	data map[string]string
	err  error
}

func (d *decoder) fail(key, value, problem string) {
	if d.err == nil {
		d.err = &DecodeError{Key: key, Value: truncate(value, 64), Problem: problem}
	}
}

// known refuses keys outside the given ones, in a stable order.
func (d *decoder) known(keys []string) {
	var unknown []string
	for k := range d.data {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		d.fail(unknown[0], "", "is not a key of the protocol (want "+strings.Join(keys, ", ")+")")
	}
}

// version refuses another protocol version; none is version 1.
func (d *decoder) version() {
	if s, ok := d.data[KeyVersion]; ok && s != strconv.Itoa(Version) {
		d.fail(KeyVersion, s, fmt.Sprintf("is not protocol version %d: the pod runs another spanbench; use the manager's runner image", Version))
	}
}

func (d *decoder) state(allowed ...State) State {
	s := State(d.data[KeyState])
	if s != StateNone && !slices.Contains(allowed, s) {
		d.fail(KeyState, string(s), fmt.Sprintf("is not a state (want one of %v)", allowed))
		return StateNone
	}
	return s
}

func (d *decoder) message() string {
	m := d.data[KeyMessage]
	if len(m) > MaxMessageBytes {
		d.fail(KeyMessage, m, fmt.Sprintf("is %d bytes, more than %d", len(m), MaxMessageBytes))
		return ""
	}
	return m
}

// count reads a decimal count of up to bits bits; missing or empty is 0.
func (d *decoder) count(key string, bits int) int64 {
	s := d.data[key]
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, bits+1)
	if err != nil || n < 0 {
		d.fail(key, s, fmt.Sprintf("is not a count (a decimal number from 0 to %d)", int64(1)<<bits-1))
		return 0
	}
	return n
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "..."
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "") + more
}
