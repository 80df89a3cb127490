package v1alpha1

import (
	"regexp"
	"strings"
)

// The syntax of the API's strings, as the CRD's patterns and CEL rules
// write them (the markers repeat these texts: a marker cannot name a Go
// constant). Go's regexp and the API server's (CEL and OpenAPI patterns
// alike) are both RE2, so one text means the same in both places;
// TestCRDPatternsAreTheGoPatterns holds the two copies together.
const (
	// DurationSyntax is the text of a duration: exactly what Go's
	// time.ParseDuration (and so CEL's duration()) reads, an optional sign
	// then decimal numbers each with a unit, or 0. The schema admits no
	// text the manager could not decode, and refuses none the CLI runs.
	DurationSyntax = `^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

	// CPUSyntax is a cpu quantity: cores with at most 3 decimals, or
	// millicores.
	CPUSyntax = `^([0-9]{1,6}([.][0-9]{1,3})?|[0-9]{1,9}m)$`
	// BytesSyntax is a memory or storage quantity: bytes, or a decimal
	// with a decimal or binary suffix up to T and Ti.
	BytesSyntax = `^([0-9]{1,15}|[0-9]{1,6}([.][0-9]{1,3})?(k|M|G|T|Ki|Mi|Gi|Ti))$`

	// LabelKeySyntax is a Kubernetes label key (and taint key): an
	// optional DNS-subdomain prefix and '/', then a name of at most 63
	// characters. The prefix's 253-character bound is checked apart.
	LabelKeySyntax = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// TaintKeySyntax is a toleration's key: a label key, or empty (with
	// operator Exists, every key).
	TaintKeySyntax = `^(([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`
	// LabelValueSyntax is a Kubernetes label value (at most 63 characters,
	// bounded apart), possibly empty.
	LabelValueSyntax = `^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
	// DNSSubdomainSyntax is a Kubernetes object name such as a service
	// account's or a Secret's (at most 253 characters, bounded apart).
	DNSSubdomainSyntax = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// OptionalDNSSubdomainSyntax is DNSSubdomainSyntax or empty, for an
	// optional name (the service account).
	OptionalDNSSubdomainSyntax = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// SecretKeySyntax is a key of a Secret's data: letters, digits, '-',
	// '_' and '.', neither "." nor ".." nor starting with "..".
	SecretKeySyntax = `^(([.][-_A-Za-z0-9]|[-_A-Za-z0-9])[-._A-Za-z0-9]*)?$`
	// ImageSyntax is a container image reference: an optional registry
	// host (with a port), a lower-case repository path, an optional tag
	// and an optional sha256 digest.
	ImageSyntax = `^(([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?/)?[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][-A-Za-z0-9_.]{0,127})?(@sha256:[a-f0-9]{64})?)?$`
	// InstanceConfigSyntax is a Spanner instance configuration's ID, such
	// as regional-asia-northeast1, asia1 or custom-my-config: never a full
	// resource name (projects/P/instanceConfigs/ID), so that the project a
	// configuration belongs to is always the target's project.
	InstanceConfigSyntax = `^([a-z]([-a-z0-9]*[a-z0-9])?)?$`
	// LocationSyntax is a Spanner replica location (a region), such as
	// asia-northeast1 or us-east1.
	LocationSyntax = `^([a-z][-a-z0-9]*[a-z0-9])?$`
	// EmulatorHostSyntax is an emulator's address, host:port, or empty: a
	// DNS name or IPv4 address, or an IPv6 address in brackets, then a
	// port from 1 to 65535. No scheme, path or user: the manager dials
	// exactly this (net.SplitHostPort reads every text it matches).
	EmulatorHostSyntax = `^(([A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?)*|[[][0-9A-Fa-f:.]+[]]):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$`
	// StepNameSyntax is a Transaction step's name, as later steps' from
	// names it (step.column): an identifier that may hold '-'.
	StepNameSyntax = `^[A-Za-z_][A-Za-z0-9_-]*$`
	// MaxStepNameLength is the longest Transaction step name (the schema's
	// maxLength on steps[].name; the SQL checks refuse longer ones alike).
	MaxStepNameLength = 128
)

var (
	durationPattern       = regexp.MustCompile(DurationSyntax)
	cpuPattern            = regexp.MustCompile(CPUSyntax)
	bytesPattern          = regexp.MustCompile(BytesSyntax)
	labelKeyPattern       = regexp.MustCompile(LabelKeySyntax)
	labelValuePattern     = regexp.MustCompile(LabelValueSyntax)
	dnsSubdomainPattern   = regexp.MustCompile(DNSSubdomainSyntax)
	secretKeyPattern      = regexp.MustCompile(SecretKeySyntax)
	imagePattern          = regexp.MustCompile(ImageSyntax)
	instanceConfigPattern = regexp.MustCompile(InstanceConfigSyntax)
	locationPattern       = regexp.MustCompile(LocationSyntax)
	emulatorHostPattern   = regexp.MustCompile(EmulatorHostSyntax)
)

// Lengths of the strings above, as the schema's MaxLength markers set them.
const (
	maxLabelKeyLength       = 317 // a 253-character prefix, '/', a 63-character name
	maxLabelKeyPrefix       = 253
	maxLabelValueLength     = 63
	maxDNSSubdomainLength   = 253
	maxImageLength          = 512
	maxInstanceConfigLength = 64
	maxLocationLength       = 63
)

// validLabelKey reports whether s is a label key within its bounds.
func validLabelKey(s string) bool {
	return len(s) <= maxLabelKeyLength && labelKeyPattern.MatchString(s) && strings.Index(s, "/") <= maxLabelKeyPrefix
}
