package endpoint

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// ErrNotAllowed is the error of an endpoint the process's allowlist refuses;
// nothing was dialed.
var ErrNotAllowed = errors.New("not allowed by the manager's allowlist")

// EmulatorAllowlist says which emulator addresses (host:port) a process may
// dial. A manifest names its emulator (spec.target.emulatorHost), so a
// process that dials on behalf of others (the manager) dials only what its
// operator listed: otherwise anyone who may create a run could make it
// connect to the cloud metadata server or the Kubernetes API and read the
// dial's outcome back from the run's conditions.
//
// The zero value restricts nothing (a test's or the CLI's own process);
// AllowEmulators builds a restricting one, which an empty list makes allow
// no emulator at all.
type EmulatorAllowlist struct {
	restricted bool
	// hosts are the allowed addresses, host part lower-cased.
	hosts []string
}

// AllowEmulators is the allowlist of exactly these host:port addresses
// (compared exactly, host part case-insensitively: "localhost:9010" does
// not allow "127.0.0.1:9010"). Each must be a host:port with a numeric
// port.
func AllowEmulators(hosts ...string) (EmulatorAllowlist, error) {
	a := EmulatorAllowlist{restricted: true}
	for _, h := range hosts {
		n, err := normalize(h)
		if err != nil {
			return EmulatorAllowlist{}, err
		}
		if !slices.Contains(a.hosts, n) {
			a.hosts = append(a.hosts, n)
		}
	}
	return a, nil
}

// normalize checks that addr is host:port and lower-cases its host.
func normalize(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("emulator address %q: %w (want host:port)", addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("emulator address %q: port %q is not a number from 1 to 65535", addr, port)
	}
	if host == "" {
		return "", fmt.Errorf("emulator address %q: no host", addr)
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// Allows reports whether the process may dial e: Cloud Spanner endpoints
// always (the operator configures them), an emulator only if listed.
func (a EmulatorAllowlist) Allows(e Endpoint) bool {
	if !a.restricted || !e.IsEmulator() {
		return true
	}
	n, err := normalize(e.emulator)
	return err == nil && slices.Contains(a.hosts, n)
}

// Check is nil if a allows e, else an error wrapping ErrNotAllowed that
// names the address and the allowlist, and nothing a dial would have said.
func (a EmulatorAllowlist) Check(e Endpoint) error {
	if a.Allows(e) {
		return nil
	}
	return fmt.Errorf("the emulator at %q is %w of emulator hosts (%s)", e.emulator, ErrNotAllowed, a)
}

// String lists the allowed addresses for messages.
func (a EmulatorAllowlist) String() string {
	switch {
	case !a.restricted:
		return "any"
	case len(a.hosts) == 0:
		return "none"
	}
	return strings.Join(a.hosts, ", ")
}
