package result

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"
)

// Spec is the resolved workload spec recorded with a result ("spec" in the
// document). The load layer does not know the API's types: it keeps the
// spec as the JSON it was given, byte for byte, and reads from it only what
// the result itself needs, the warm-up settings and the operations' names
// and types (Settings).
type Spec struct {
	raw      json.RawMessage
	settings Settings
}

// Settings are what a result needs of its spec.
type Settings struct {
	// WarmUp is the spec's warmUp.
	WarmUp WarmUpSettings
	// Operations are the spec's operations, in spec order.
	Operations []OperationInfo
	// Batches are the iterations of each batch stream (a stream with
	// iterations), by stream name; nil without one.
	Batches map[string]int64
}

// WarmUpMode says how the warm-up at the start of a run ends; the values
// are the API's (spec.workload.warmUp.mode).
type WarmUpMode string

// Warm-up modes.
const (
	// WarmUpNone counts every interval.
	WarmUpNone WarmUpMode = "None"
	// WarmUpFixed excludes the intervals of a fixed duration.
	WarmUpFixed WarmUpMode = "Fixed"
	// WarmUpAuto ends the warm-up when throughput and p99 stabilise.
	WarmUpAuto WarmUpMode = "Auto"
)

// Defaults of an Auto warm-up whose recorded spec lacks them. A resolved
// spec always carries them (the API's defaulting sets them, and a test in
// package shardrun checks these values agree); they serve documents written
// by hand.
const (
	DefaultWarmUpWindow    = 3
	DefaultWarmUpTolerance = 10
)

// WarmUpSettings are the warm-up part of a spec.
type WarmUpSettings struct {
	// Mode is None, Fixed or Auto ("" reads as None).
	Mode WarmUpMode
	// Duration is the Fixed warm-up's length.
	Duration time.Duration
	// Window is how many stable intervals end an Auto warm-up.
	Window int
	// TolerancePercent is how far an Auto window may stray from its mean.
	TolerancePercent int
	// Max ends an Auto warm-up that never stabilises; 0 means the run's end.
	Max time.Duration
}

// OperationType is an operation's type as the spec names it (Read, Update...).
type OperationType string

// OperationInfo names one operation of the spec.
type OperationInfo struct {
	// Name is the operation's name.
	Name string
	// Type is the operation's type.
	Type OperationType
}

// specJSON is the part of the API's WorkloadSpec JSON that Settings reads.
type specJSON struct {
	WarmUp *struct {
		Mode             WarmUpMode `json:"mode"`
		Duration         string     `json:"duration"`
		Window           int        `json:"window"`
		TolerancePercent int        `json:"tolerancePercent"`
		Max              string     `json:"max"`
	} `json:"warmUp"`
	Operations []struct {
		Name string        `json:"name"`
		Type OperationType `json:"type"`
	} `json:"operations"`
	Streams []struct {
		Name       string `json:"name"`
		Iterations int64  `json:"iterations"`
	} `json:"streams"`
}

// NewSpec records the JSON of a resolved workload spec.
func NewSpec(raw []byte) (Spec, error) {
	var s Spec
	return s, s.UnmarshalJSON(raw)
}

// Raw is the spec's JSON as recorded, for readers that know its type.
func (s Spec) Raw() json.RawMessage { return s.raw }

// Settings are what the result reads from the spec.
func (s Spec) Settings() Settings { return s.settings }

// Equal reports whether two specs are the same JSON, ignoring layout.
func (s Spec) Equal(o Spec) bool {
	var a, b bytes.Buffer
	if json.Compact(&a, s.raw) != nil || json.Compact(&b, o.raw) != nil {
		return bytes.Equal(s.raw, o.raw)
	}
	return bytes.Equal(a.Bytes(), b.Bytes())
}

// Hash is the SHA-256 of the spec's compacted JSON: two specs are Equal
// when their hashes are.
func (s Spec) Hash() [sha256.Size]byte {
	var b bytes.Buffer
	if json.Compact(&b, s.raw) != nil {
		return sha256.Sum256(s.raw)
	}
	return sha256.Sum256(b.Bytes())
}

// MarshalJSON writes the spec as recorded ("null" when there is none).
func (s Spec) MarshalJSON() ([]byte, error) {
	if len(s.raw) == 0 {
		return []byte("null"), nil
	}
	return s.raw, nil
}

// UnmarshalJSON records the spec and reads its Settings.
func (s *Spec) UnmarshalJSON(raw []byte) error {
	var j specJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	settings := Settings{WarmUp: WarmUpSettings{Mode: WarmUpNone}}
	if w := j.WarmUp; w != nil {
		var err error
		settings.WarmUp = WarmUpSettings{Mode: w.Mode, Window: w.Window, TolerancePercent: w.TolerancePercent}
		if settings.WarmUp.Mode == "" {
			settings.WarmUp.Mode = WarmUpNone
		}
		settings.WarmUp.Duration, err = parseDuration(w.Duration)
		if err != nil {
			return fmt.Errorf("spec.warmUp.duration: %w", err)
		}
		settings.WarmUp.Max, err = parseDuration(w.Max)
		if err != nil {
			return fmt.Errorf("spec.warmUp.max: %w", err)
		}
	}
	for _, o := range j.Operations {
		settings.Operations = append(settings.Operations, OperationInfo{Name: o.Name, Type: o.Type})
	}
	for _, st := range j.Streams {
		if st.Iterations > 0 {
			if settings.Batches == nil {
				settings.Batches = map[string]int64{}
			}
			settings.Batches[st.Name] = st.Iterations
		}
	}
	s.raw = nil
	if !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		s.raw = append(json.RawMessage(nil), raw...)
	}
	s.settings = settings
	return nil
}

// parseDuration reads a duration as the API writes it ("1m30s"); "" is 0.
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}
