package preflight

import (
	"fmt"
	"io"
)

// WriteText writes the report for a person: the endpoint, each check with
// its outcome, and each missing permission with the role that grants it.
func (r Report) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "preflight against %s\n", r.Endpoint); err != nil {
		return err
	}
	for _, c := range r.Results {
		detail := c.Detail
		if c.Transient {
			detail += " (Google did not answer: asking again may pass)"
		}
		if _, err := fmt.Fprintf(w, "  [%-7s] %-22s %s\n", c.Status, c.Name, detail); err != nil {
			return err
		}
		for _, m := range c.Missing {
			role := m.Role
			if role == "" {
				role = "no predefined role known here"
			}
			if _, err := fmt.Fprintf(w, "             missing %s on %s (to %s): grant %s\n", m.Name, m.Resource, m.Use, role); err != nil {
				return err
			}
		}
	}
	verdict := "all checks passed: nothing was created"
	switch {
	case r.Transient():
		verdict = "some checks could not be asked: Google did not answer; run the preflight again"
	case !r.OK():
		verdict = "some checks failed: fix them before the run creates anything"
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}
