package guardrails

import (
	"slices"
	"strings"
)

// controlPlaneKeys are the node label and taint keys of control-plane
// nodes. A run may name them only when an allowlist names them exactly:
// "*" and prefixes never match them.
var controlPlaneKeys = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

// KeyAllowlist is a list of label or taint keys: an entry is a key
// (compared exactly), a prefix ending in '/' (cloud.google.com/), or "*",
// any key. The control plane's keys match an exact entry only. An empty
// list allows no key.
type KeyAllowlist []string

// Allows says whether key is on the list.
func (l KeyAllowlist) Allows(key string) bool {
	if slices.Contains(l, key) {
		return true
	}
	if slices.Contains(controlPlaneKeys, key) {
		return false
	}
	return slices.ContainsFunc(l, func(e string) bool {
		return e == "*" || (strings.HasSuffix(e, "/") && strings.HasPrefix(key, e))
	})
}

// String lists the entries for a message.
func (l KeyAllowlist) String() string { return listOrNone(l) }

// ImageAllowlist is a list of container images: an entry ending in '/',
// ':' or '@' is a prefix (registry.example/bench/ does not allow
// registry.example/bench-evil/x), any other is an image compared exactly.
type ImageAllowlist []string

// Allows says whether image is on the list.
func (l ImageAllowlist) Allows(image string) bool {
	return slices.ContainsFunc(l, func(e string) bool {
		if strings.HasSuffix(e, "/") || strings.HasSuffix(e, ":") || strings.HasSuffix(e, "@") {
			return strings.HasPrefix(image, e)
		}
		return image == e
	})
}

// String lists the entries for a message.
func (l ImageAllowlist) String() string { return listOrNone(l) }

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
