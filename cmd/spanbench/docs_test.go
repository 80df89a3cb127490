package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/internal/userdocs"
)

// userDocs is the text a user reads: the README and every page of docs/.
func userDocs(t *testing.T) string {
	t.Helper()
	docs, err := userdocs.Read(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// flagLine is a flag's first line in a flag set's usage: "  -name type".
var flagLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// TestEveryFlagIsDocumented holds "every field documented" for the flags a
// user passes: every flag of every command but the runner pods' (which
// the controller passes, and whose zap flags are controller-runtime's) is
// named in the README or docs/ as --name (-x for a one-letter flag), so
// that a flag added without a word in the docs fails here.
func TestEveryFlagIsDocumented(t *testing.T) {
	docs := userDocs(t)
	for _, c := range commands {
		if c.name == "runner" || c.name == "version" {
			continue
		}
		var stdout, stderr bytes.Buffer
		dispatch(context.Background(), []string{c.name, "-h"}, &stdout, &stderr)
		flags := flagLine.FindAllStringSubmatch(stderr.String()+stdout.String(), -1)
		if len(flags) == 0 {
			t.Errorf("spanbench %s -h lists no flags: is the usage's format still \"  -name\"?\n%s", c.name, stderr.String())
		}
		for _, f := range flags {
			name := f[1]
			dashes := "--"
			if len(name) == 1 {
				dashes = "-"
			}
			if !regexp.MustCompile(`(^|[^a-z0-9-])` + dashes + regexp.QuoteMeta(name) + `([^a-z0-9-]|$)`).MatchString(docs) {
				t.Errorf("spanbench %s %s%s is in no page of docs/ nor the README: say what it does and its default", c.name, dashes, name)
			}
		}
	}
}

// reasonConst is a constant that names a condition's or an event's reason.
var reasonConst = regexp.MustCompile(`^(Reason|reason|Event)[A-Z]`)

// TestEveryReasonIsDocumented: every condition and event reason the API
// and the controllers declare (constants named Reason*, reason* or
// Event*) is named in the README or docs/ as `Reason`, so that a user who
// meets one in `kubectl describe` finds what it means.
func TestEveryReasonIsDocumented(t *testing.T) {
	docs := userDocs(t)
	var reasons int
	for _, dir := range []string{"api", "controllers"} {
		err := filepath.WalkDir(filepath.Join("..", "..", dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.CONST {
					continue
				}
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !reasonConst.MatchString(name.Name) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						reasons++
						if value := strings.Trim(lit.Value, "`\""); !strings.Contains(docs, "`"+value+"`") {
							t.Errorf("%s (%s, %s) is in no page of docs/ nor the README", value, name.Name, path)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if reasons < 50 {
		t.Fatalf("only %d reason constants found: is the walk broken?", reasons)
	}
}

// TestEveryPageIsListed: the README's list of pages names every page of
// docs/, so that a new page is found from the README.
func TestEveryPageIsListed(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if entry := "- `docs/" + filepath.Base(p) + "` — "; !strings.Contains(string(readme), entry) {
			t.Errorf("the README's list of pages has no line %q", entry)
		}
	}
}

// repoPath is a path of this repository in backticks, under one of its
// top-level folders; a Go identifier may follow (`spanner/target.Step`).
var repoPath = regexp.MustCompile("`((?:api|cmd|config|controllers|runner|spanner|result|campaign|charts|hack|docs|test|internal)/[^` #:]*?)(?:\\.[A-Z][A-Za-z0-9]*)?(?:#[^`]*)?`")

// notInTheRepository are names the docs write like paths that are not
// files of it: Cloud Monitoring's metric types, and the file
// hack/refresh-prices.sh writes.
var notInTheRepository = map[string]bool{
	"api/api_request_count":           true,
	"api/request_latencies":           true,
	"spanner/pricing/prices.yaml.new": true,
}

// TestEveryPathInTheDocsExists: every repository path the README and
// docs/ name exists (globs match something), so that a file moved or
// removed without the docs fails here.
func TestEveryPathInTheDocsExists(t *testing.T) {
	var checked int
	for _, m := range repoPath.FindAllStringSubmatch(userDocs(t), -1) {
		p := m[1]
		if notInTheRepository[p] || strings.Contains(p, "...") || strings.Contains(p, "{") {
			continue
		}
		checked++
		matches, err := filepath.Glob(filepath.Join("..", "..", filepath.FromSlash(p)))
		if err != nil || len(matches) == 0 {
			t.Errorf("the docs name %s, which is not in the repository", p)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d paths found in the docs: is the pattern broken?", checked)
	}
}

// makeTarget is a target as the docs run it: `make NAME` in backticks, or
// a shell block's line "make NAME", alone or before a comment.
var makeTarget = regexp.MustCompile("(?m)`make ([a-z][a-z0-9-]*)|^make ([a-z][a-z0-9-]*)(?:$| +#)")

// TestEveryMakeTargetInTheDocsExists: every `make NAME` of the README and
// docs/ is a target of the Makefile or its hack/*.mk.
func TestEveryMakeTargetInTheDocsExists(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "hack", "*.mk"))
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*)(?: [a-z][a-z0-9-]*)*:`)
	targets := map[string]bool{}
	for _, f := range append(files, filepath.Join("..", "..", "Makefile")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rule.FindAllStringSubmatch(string(b), -1) {
			targets[m[1]] = true
		}
	}
	named := makeTarget.FindAllStringSubmatch(userDocs(t), -1)
	if len(named) < 10 {
		t.Fatalf("only %d make commands found in the docs: is the pattern broken?", len(named))
	}
	for _, m := range named {
		if name := m[1] + m[2]; !targets[name] {
			t.Errorf("the docs run `make %s`, which is no target of the Makefile or hack/*.mk", name)
		}
	}
}
