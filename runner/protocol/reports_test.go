package protocol

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReportsRoundTrip(t *testing.T) {
	loaders := []LoaderReport{
		{},
		{State: StateLoading, Loaded: 120, ResumeFrom: 100},
		{State: StateFailed, Message: "evicted", Loaded: 700, ResumeFrom: 650, Retries: 2, ResumedAt: 400},
		{State: StateSucceeded, Loaded: 1 << 40, ResumeFrom: 1 << 41, Retries: 3, ResumedAt: 1 << 40},
	}
	for _, want := range loaders {
		m := EncodeLoaderReport(want)
		got, err := DecodeLoaderReport(m.Data)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("DecodeLoaderReport(EncodeLoaderReport(%+v)) = %+v, %v; want it back, no error", want, got, err)
		}
	}
	ready := time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC)
	shards := []ShardReport{
		{},
		{Ready: ready},
		{Ready: ready, State: StateSucceeded, Result: []byte("gzip")},
		{State: StateFailed, Message: "no credentials"},
	}
	for _, want := range shards {
		m := EncodeShardReport(want)
		got, err := DecodeShardReport(m.Data, m.BinaryData)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("DecodeShardReport(EncodeShardReport(%+v)) = %+v, %v; want it back, no error", want, got, err)
		}
	}
}

// TestAnEmptyMapIsTheZeroReport: the controller creates the maps empty; a
// pod that has not written yet has reported nothing, not garbage.
func TestAnEmptyMapIsTheZeroReport(t *testing.T) {
	if r, err := DecodeLoaderReport(nil); err != nil || r != (LoaderReport{}) {
		t.Errorf("DecodeLoaderReport(nil) = %+v, %v; want the zero report", r, err)
	}
	if r, err := DecodeShardReport(nil, nil); err != nil || !cmp.Equal(r, ShardReport{}) {
		t.Errorf("DecodeShardReport(nil, nil) = %+v, %v; want the zero report", r, err)
	}
}

// TestAReportWithoutAVersionIsVersionOne: pods written before the version
// key wrote the same keys.
func TestAReportWithoutAVersionIsVersionOne(t *testing.T) {
	r, err := DecodeLoaderReport(map[string]string{KeyState: "Loading", KeyLoaded: "5"})
	if err != nil || r.State != StateLoading || r.Loaded != 5 {
		t.Errorf("a report without a version decoded as %+v, %v; want Loading, 5 rows", r, err)
	}
}

// TestDecodeRefusesWhatAPodCouldNotHaveWritten: pods may run a user's
// image; every report a spanbench pod could not have written is a
// *DecodeError naming the key.
func TestDecodeRefusesWhatAPodCouldNotHaveWritten(t *testing.T) {
	long := strings.Repeat("x", MaxMessageBytes+1)
	loaders := map[string]struct {
		data     map[string]string
		key, say string
	}{
		"not a number":    {map[string]string{KeyLoaded: "12k"}, KeyLoaded, `"12k" is not a count`},
		"negative":        {map[string]string{KeyResumeFrom: "-1"}, KeyResumeFrom, "is not a count"},
		"overflow":        {map[string]string{KeyRetries: "2147483648"}, KeyRetries, "is not a count (a decimal number from 0 to 2147483647)"},
		"unknown state":   {map[string]string{KeyState: "Done"}, KeyState, `"Done" is not a state`},
		"shard state":     {map[string]string{KeyState: "Running"}, KeyState, "is not a state"},
		"unknown key":     {map[string]string{"progress": "50%"}, "progress", "is not a key of the protocol"},
		"shard key":       {map[string]string{KeyReady: "now"}, KeyReady, "is not a key of the protocol"},
		"another version": {map[string]string{KeyVersion: "2"}, KeyVersion, "is not protocol version 1"},
		"long message":    {map[string]string{KeyMessage: long}, KeyMessage, "more than 2048"},
	}
	for name, tc := range loaders {
		t.Run("loader/"+name, func(t *testing.T) {
			_, err := DecodeLoaderReport(tc.data)
			checkDecodeError(t, err, tc.key, tc.say)
		})
	}
	shards := map[string]struct {
		data     map[string]string
		binary   map[string][]byte
		key, say string
	}{
		"ready not a time": {map[string]string{KeyReady: "soon"}, nil, KeyReady, `"soon" is not an RFC 3339 time`},
		"loading":          {map[string]string{KeyState: "Loading"}, nil, KeyState, "is not a state"},
		"loader key":       {map[string]string{KeyLoaded: "1"}, nil, KeyLoaded, "is not a key of the protocol"},
		"unknown binary":   {nil, map[string][]byte{"core": {1}}, "core", "is not a key of the protocol"},
		"huge result":      {nil, map[string][]byte{KeyResult: make([]byte, MaxResultBytes+1)}, KeyResult, "more than the 921600 a result may take"},
		"another version":  {map[string]string{KeyVersion: "v1"}, nil, KeyVersion, `"v1" is not protocol version 1`},
		"half a head":      {map[string]string{"resultBytes": "10"}, nil, "resultChunks", "does not describe a chunked result"},
		"head and inline": {map[string]string{"resultBytes": "0", "resultSHA256": strings.Repeat("a", 64), "resultChunks": strings.Repeat("b", 64)},
			map[string][]byte{KeyResult: {1}}, KeyResult, "a result is stored one way"},
	}
	for name, tc := range shards {
		t.Run("shard/"+name, func(t *testing.T) {
			_, err := DecodeShardReport(tc.data, tc.binary)
			checkDecodeError(t, err, tc.key, tc.say)
		})
	}
}

func checkDecodeError(t *testing.T, err error, key, say string) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) || de.Key != key || !strings.Contains(err.Error(), say) {
		t.Fatalf("decoding returned %v; want a *DecodeError naming key %q and saying %q", err, key, say)
	}
}

// TestEncodeCutsALongMessage: a pod's error may be long; its report must
// still decode.
func TestEncodeCutsALongMessage(t *testing.T) {
	msg := strings.Repeat("é", MaxMessageBytes) // 2 bytes each
	m := EncodeLoaderReport(LoaderReport{State: StateFailed, Message: msg})
	got, err := DecodeLoaderReport(m.Data)
	if err != nil || len(got.Message) > MaxMessageBytes || !strings.HasSuffix(got.Message, "...") {
		t.Fatalf("a long message came back as %d bytes, %v; want at most %d ending in ...", len(got.Message), err, MaxMessageBytes)
	}
	if !strings.HasPrefix(msg, strings.TrimSuffix(got.Message, "...")) {
		t.Errorf("the cut message is not a prefix of the message (cut inside a rune?)")
	}
}
