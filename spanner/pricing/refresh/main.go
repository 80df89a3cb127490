// Command refresh turns Cloud Billing Catalog SKU pages (services.skus.list
// responses for Cloud Spanner, concatenated) read from stdin into a price
// catalog file on stdout, for hack/refresh-prices.sh. SKUs it cannot map
// are listed on stderr. It never touches the network.
//
//	go run ./spanner/pricing/refresh -currency USD -taken-on 2026-11-29 < pages.json > prices.yaml
//	go run ./spanner/pricing/refresh -next-page-token < page.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spanbench/spanbench/spanner/pricing"
)

func main() {
	if err := run(os.Stdin, os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "refresh:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out, errOut io.Writer, args []string) error {
	fs := flag.NewFlagSet("refresh", flag.ContinueOnError)
	cur := fs.String("currency", "USD", "the ISO 4217 currency the SKUs were listed in")
	takenOn := fs.String("taken-on", time.Now().UTC().Format(time.DateOnly), "the date the SKUs were fetched (YYYY-MM-DD)")
	next := fs.Bool("next-page-token", false, "print one page's nextPageToken and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *next {
		var p pricing.SKUPage
		if err := json.NewDecoder(io.LimitReader(in, 64<<20)).Decode(&p); err != nil {
			return fmt.Errorf("SKU page does not parse: %w", err)
		}
		_, err := fmt.Fprintln(out, p.NextPageToken)
		return err
	}
	skus, err := pricing.ReadSKUPages(in)
	if err != nil {
		return err
	}
	f, skipped, err := pricing.CatalogFromSKUs(skus, *cur, *takenOn)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(errOut, "skipped %s %q: %s\n", s.SKUID, s.Description, s.Reason)
	}
	b, err := pricing.MarshalFile(f)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}
