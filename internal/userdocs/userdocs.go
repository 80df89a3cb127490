// Package userdocs reads the text a user reads, the README and every page
// of docs/, for the tests that keep the docs true to the code (every flag,
// served series, reason, path and make target named there): one owner of
// which files those are.
package userdocs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Read returns the README and every docs/*.md page of the repository at
// root, each followed by a newline. It fails if docs/ has no page.
func Read(root string) (string, error) {
	pattern := filepath.Join(root, "docs", "*.md")
	pages, err := filepath.Glob(pattern)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pattern, err)
	}
	if len(pages) == 0 {
		return "", fmt.Errorf("no page matches %s", pattern)
	}
	var all strings.Builder
	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	return all.String(), nil
}
