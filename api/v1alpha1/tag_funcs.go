package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxTagLength is the longest request or transaction tag Spanner keeps:
// longer tags are silently truncated.
const MaxTagLength = 50

// tagPrefix marks spanbench's traffic in Spanner's statistics tables.
const tagPrefix = "spanbench/"

// tagHashLength is how many hex digits of the run's hash a shortened tag
// carries: 32 bits, so runs that differ only past the cut collide with odds
// of about one in four billion per pair.
const tagHashLength = 8

// RequestTag is the request and transaction tag of operation op in run:
// spanbench/<run>/<op>, which joins a run's client results to Spanner's
// statistics tables (SPANNER_SYS.QUERY_STATS_*, TXN_STATS_*).
//
// Spanner keeps only MaxTagLength characters, so a plain cut would give
// every run sharing a long name prefix (a campaign's children, say) the
// same tag. A tag that would be too long therefore keeps a readable prefix
// of the run name and adds a hash of the whole run name:
// spanbench/<run prefix>~<hash>/<op>. "~" cannot occur in a Kubernetes
// name, so a shortened tag never equals the plain tag of another run. The
// operation name is kept whole while it fits beside the hash (up to 31
// characters); beyond that it is cut and the hash covers it too, so tags
// stay unique per (run, operation).
func RequestTag(run, op string) string {
	if plain := tagPrefix + run + "/" + op; len(plain) <= MaxTagLength {
		return plain
	}
	room := MaxTagLength - len(tagPrefix) - len("~") - tagHashLength - len("/") - len(op)
	if room >= 0 {
		return tagPrefix + run[:min(room, len(run))] + "~" + tagHash(run) + "/" + op
	}
	short := tagPrefix + tagHash(run+"/"+op) + "/" + op
	return short[:MaxTagLength]
}

// tagHash is a short stable hash of s.
func tagHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:tagHashLength]
}
