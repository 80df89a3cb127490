//go:build runner

package main

// toolCommands are none in the runner build: its pods run a shard or a
// load, nothing else.
var toolCommands []command
