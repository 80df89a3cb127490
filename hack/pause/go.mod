// A separate module so the pause image builds with the standard library only
// and stays out of the main module's ./... (build, vet, test, tidy).
module github.com/spanbench/spanbench/hack/pause

go 1.22
