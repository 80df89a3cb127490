package report

import _ "embed"

// tpccSource is the template of a TPC-C run's section ("tpcc"), parsed
// into the page's template.
//
//go:embed tpcc.html.tmpl
var tpccSource string
