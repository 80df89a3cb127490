package tpcc

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Table names, the same in both SQL dialects (lower case, unquoted).
const (
	TableWarehouse = "warehouse"
	TableDistrict  = "district"
	TableCustomer  = "customer"
	TableHistory   = "history"
	TableOrders    = "orders"
	TableNewOrder  = "new_order"
	TableOrderLine = "order_line"
	TableStock     = "stock"
	TableItem      = "item"
)

// Columns of each table, key first, in the order Unit's values follow.
// Money is in cents and tax rates in basis points, as INT64, so that sums
// (W_YTD = sum of D_YTD) are exact in both dialects.
var Columns = map[string][]string{
	TableWarehouse: {"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"},
	TableDistrict:  {"w_id", "d_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"},
	TableCustomer: {"w_id", "d_id", "c_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city", "c_state", "c_zip",
		"c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"},
	TableHistory:   {"w_id", "h_id", "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_date", "h_amount", "h_data"},
	TableOrders:    {"w_id", "d_id", "o_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"},
	TableNewOrder:  {"w_id", "d_id", "o_id"},
	TableOrderLine: {"w_id", "d_id", "o_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"},
	TableStock: {"w_id", "s_i_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05", "s_dist_06", "s_dist_07",
		"s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"},
	TableItem: {"i_id", "i_im_id", "i_name", "i_price", "i_data"},
}

// HistoryAmount is a loaded history row's H_AMOUNT, and so each loaded
// customer's C_YTD_PAYMENT and minus its C_BALANCE, in cents (clause
// 4.3.3.1: 10.00).
const HistoryAmount = 1000

// InitialDistrictYTD is a loaded district's D_YTD in cents: the sum of its
// customers' loaded history rows (consistency condition 9), 30,000.00 in
// the Full population as clause 4.3.3.1 sets it. A warehouse's W_YTD is
// its ten districts' sum (conditions 1 and 8).
func InitialDistrictYTD(s v1alpha1.TPCCScale) int64 { return s.Customers * HistoryAmount }

// LoadedAt dates the population's timestamps, so that a dataset is a pure
// function of its scale.
var LoadedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Row is one row of the population: a table and its Columns' values. A
// nil value is NULL.
type Row struct {
	Table  string
	Values []any
}

// Unit is load unit k of a population (v1alpha1.TPCCScale.Units): item
// k+1 for the first Items units, then for each warehouse the warehouse
// with its ten districts, its stock rows one by one, and its customers one
// by one, each with its history row and the order of the same number (its
// order lines and, for the last NewOrders orders of the district, its
// new-order row). Every value is a pure function of (scale, k).
func Unit(s v1alpha1.TPCCScale, k int64) []Row {
	rng := rand.New(rand.NewPCG(uint64(k), 0x7470_6363_6c6f_6164)) //nolint:gosec // reproducible data, not a secret
	if k < s.Items {
		return []Row{item(rng, k+1)}
	}
	u := k - s.Items
	w, r := u/s.UnitsPerWarehouse()+1, u%s.UnitsPerWarehouse()
	switch {
	case r == 0:
		return warehouse(rng, w, s.Customers+1, InitialDistrictYTD(s))
	case r <= s.Items:
		return []Row{stock(rng, w, r)}
	}
	c := r - 1 - s.Items
	return customer(rng, s, w, c/s.Customers+1, c%s.Customers+1)
}

func item(rng *rand.Rand, id int64) Row {
	return Row{TableItem, []any{id, Uniform(rng, 1, 10_000), AString(rng, 14, 24), Uniform(rng, 100, 10_000), data(rng)}}
}

// warehouse is warehouse w and its districts, whose next order is
// nextOrder and whose D_YTD is districtYTD.
func warehouse(rng *rand.Rand, w, nextOrder, districtYTD int64) []Row {
	rows := []Row{{TableWarehouse, append([]any{w, AString(rng, 6, 10)}, address(rng, Uniform(rng, 0, 2000), v1alpha1.TPCCDistricts*districtYTD)...)}}
	for d := int64(1); d <= v1alpha1.TPCCDistricts; d++ {
		rows = append(rows, Row{TableDistrict, append(append([]any{w, d, AString(rng, 6, 10)}, address(rng, Uniform(rng, 0, 2000), districtYTD)...), nextOrder)})
	}
	return rows
}

// address is street 1 and 2, city, state and zip, then tax and ytd.
func address(rng *rand.Rand, tax, ytd int64) []any {
	return []any{AString(rng, 10, 20), AString(rng, 10, 20), AString(rng, 10, 20), AString(rng, 2, 2), Zip(rng), tax, ytd}
}

func stock(rng *rand.Rand, w, i int64) Row {
	v := []any{w, i, Uniform(rng, 10, 100)}
	for range 10 {
		v = append(v, AString(rng, 24, 24))
	}
	return Row{TableStock, append(v, int64(0), int64(0), int64(0), data(rng))}
}

func customer(rng *rand.Rand, s v1alpha1.TPCCScale, w, d, c int64) []Row {
	last := c - 1
	if c > 1000 {
		last = NURand(rng, ALast, 0, 999, LoadConstants.CLast)
	}
	credit := "GC"
	if rng.IntN(10) == 0 {
		credit = "BC"
	}
	cust := []any{w, d, c, AString(rng, 8, 16), "OE", LastName(last), AString(rng, 10, 20), AString(rng, 10, 20), AString(rng, 10, 20),
		AString(rng, 2, 2), Zip(rng), NString(rng, 16), LoadedAt, credit, int64(5_000_000), Uniform(rng, 0, 5000), int64(-HistoryAmount), int64(HistoryAmount),
		int64(1), int64(0), AString(rng, 300, 500)}
	hist := []any{w, (d-1)*s.Customers + c, c, d, w, d, LoadedAt, int64(HistoryAmount), AString(rng, 12, 24)}
	rows := []Row{{TableCustomer, cust}, {TableHistory, hist}}
	return append(rows, order(rng, s, w, d, c)...)
}

// order is order o of district (w, d), its lines and its new-order row.
// Its customer is a permutation of the district's customers (Permuted).
func order(rng *rand.Rand, s v1alpha1.TPCCScale, w, d, o int64) []Row {
	delivered := o <= s.Customers-s.NewOrders
	lines := Uniform(rng, 5, 15)
	var carrier any
	if delivered {
		carrier = Uniform(rng, 1, 10)
	}
	rows := []Row{{TableOrders, []any{w, d, o, Permuted(w, d, o, s.Customers), LoadedAt, carrier, lines, true}}}
	for n := int64(1); n <= lines; n++ {
		var deliveredAt any
		amount := Uniform(rng, 1, 999_999)
		if delivered {
			deliveredAt, amount = LoadedAt, 0
		}
		rows = append(rows, Row{TableOrderLine, []any{w, d, o, n, Uniform(rng, 1, s.Items), w, deliveredAt, int64(5), amount, AString(rng, 24, 24)}})
	}
	if !delivered {
		rows = append(rows, Row{TableNewOrder, []any{w, d, o}})
	}
	return rows
}

// Permuted is the customer of loaded order o of district (w, d): an affine
// permutation (a*(o-1) + b) mod n + 1 with a coprime to n, both drawn from
// the district, so that every customer has exactly one loaded order
// without holding a whole permutation per district.
func Permuted(w, d, o, n int64) int64 {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(d))) //nolint:gosec // reproducible data
	a := 1 + rng.Int64N(n)
	for gcd(a, n) != 1 {
		a = 1 + rng.Int64N(n)
	}
	b := rng.Int64N(n)
	return (a*(o-1)+b)%n + 1
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// data is I_DATA or S_DATA: 26 to 50 characters, 10 % holding "ORIGINAL".
func data(rng *rand.Rand) string {
	s := AString(rng, 26, 50)
	if rng.IntN(10) == 0 {
		at := rng.IntN(len(s) - 8)
		s = s[:at] + "ORIGINAL" + s[at+8:]
	}
	return s
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// AString is a random alphanumeric string of x to y characters.
func AString(rng *rand.Rand, x, y int64) string {
	n := Uniform(rng, x, y)
	var b strings.Builder
	b.Grow(int(n))
	for range n {
		b.WriteByte(alnum[rng.IntN(len(alnum))])
	}
	return b.String()
}

// NString is a random string of n digits.
func NString(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('0' + rng.IntN(10)))
	}
	return b.String()
}

// Zip is four random digits and "11111" (clause 4.3.2.7).
func Zip(rng *rand.Rand) string { return NString(rng, 4) + "11111" }
