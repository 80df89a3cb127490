package workload

import (
	"slices"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload/tpcc"
)

// tpccDDL is the TPC-C schema in each dialect, the Spanner way: warehouse
// is the root of every table but item; district, stock and history are
// interleaved in it, customer, orders and new_order in district, and
// order_line in orders, so that a transaction's rows of one warehouse sit
// together. Names are lower case, the same unquoted in both dialects.
// Money is INT64 cents and tax rates INT64 basis points (exact sums).
// History has no key in TPC-C; here it is (w_id, h_id) with a random h_id.
var tpccDDL = map[v1alpha1.Dialect][]string{
	v1alpha1.DialectGoogleSQL: {
		`CREATE TABLE warehouse (
  w_id INT64 NOT NULL, w_name STRING(10), w_street_1 STRING(20), w_street_2 STRING(20), w_city STRING(20),
  w_state STRING(2), w_zip STRING(9), w_tax INT64, w_ytd INT64,
) PRIMARY KEY (w_id)`,
		`CREATE TABLE district (
  w_id INT64 NOT NULL, d_id INT64 NOT NULL, d_name STRING(10), d_street_1 STRING(20), d_street_2 STRING(20),
  d_city STRING(20), d_state STRING(2), d_zip STRING(9), d_tax INT64, d_ytd INT64, d_next_o_id INT64,
) PRIMARY KEY (w_id, d_id), INTERLEAVE IN PARENT warehouse ON DELETE CASCADE`,
		`CREATE TABLE customer (
  w_id INT64 NOT NULL, d_id INT64 NOT NULL, c_id INT64 NOT NULL, c_first STRING(16), c_middle STRING(2), c_last STRING(16),
  c_street_1 STRING(20), c_street_2 STRING(20), c_city STRING(20), c_state STRING(2), c_zip STRING(9), c_phone STRING(16),
  c_since TIMESTAMP, c_credit STRING(2), c_credit_lim INT64, c_discount INT64, c_balance INT64, c_ytd_payment INT64,
  c_payment_cnt INT64, c_delivery_cnt INT64, c_data STRING(500),
) PRIMARY KEY (w_id, d_id, c_id), INTERLEAVE IN PARENT district ON DELETE CASCADE`,
		`CREATE INDEX customer_by_last ON customer (w_id, d_id, c_last, c_first), INTERLEAVE IN district`,
		`CREATE TABLE history (
  w_id INT64 NOT NULL, h_id INT64 NOT NULL, h_c_id INT64, h_c_d_id INT64, h_c_w_id INT64, h_d_id INT64,
  h_date TIMESTAMP, h_amount INT64, h_data STRING(24),
) PRIMARY KEY (w_id, h_id), INTERLEAVE IN PARENT warehouse ON DELETE CASCADE`,
		`CREATE TABLE orders (
  w_id INT64 NOT NULL, d_id INT64 NOT NULL, o_id INT64 NOT NULL, o_c_id INT64, o_entry_d TIMESTAMP,
  o_carrier_id INT64, o_ol_cnt INT64, o_all_local BOOL,
) PRIMARY KEY (w_id, d_id, o_id), INTERLEAVE IN PARENT district ON DELETE CASCADE`,
		`CREATE INDEX orders_by_customer ON orders (w_id, d_id, o_c_id, o_id DESC), INTERLEAVE IN district`,
		`CREATE TABLE new_order (
  w_id INT64 NOT NULL, d_id INT64 NOT NULL, o_id INT64 NOT NULL,
) PRIMARY KEY (w_id, d_id, o_id), INTERLEAVE IN PARENT district ON DELETE CASCADE`,
		`CREATE TABLE order_line (
  w_id INT64 NOT NULL, d_id INT64 NOT NULL, o_id INT64 NOT NULL, ol_number INT64 NOT NULL, ol_i_id INT64,
  ol_supply_w_id INT64, ol_delivery_d TIMESTAMP, ol_quantity INT64, ol_amount INT64, ol_dist_info STRING(24),
) PRIMARY KEY (w_id, d_id, o_id, ol_number), INTERLEAVE IN PARENT orders ON DELETE CASCADE`,
		`CREATE TABLE stock (
  w_id INT64 NOT NULL, s_i_id INT64 NOT NULL, s_quantity INT64,
  s_dist_01 STRING(24), s_dist_02 STRING(24), s_dist_03 STRING(24), s_dist_04 STRING(24), s_dist_05 STRING(24),
  s_dist_06 STRING(24), s_dist_07 STRING(24), s_dist_08 STRING(24), s_dist_09 STRING(24), s_dist_10 STRING(24),
  s_ytd INT64, s_order_cnt INT64, s_remote_cnt INT64, s_data STRING(50),
) PRIMARY KEY (w_id, s_i_id), INTERLEAVE IN PARENT warehouse ON DELETE CASCADE`,
		`CREATE TABLE item (
  i_id INT64 NOT NULL, i_im_id INT64, i_name STRING(24), i_price INT64, i_data STRING(50),
) PRIMARY KEY (i_id)`,
	},
	v1alpha1.DialectPostgreSQL: {
		`CREATE TABLE warehouse (
  w_id bigint NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20),
  w_state varchar(2), w_zip varchar(9), w_tax bigint, w_ytd bigint,
  PRIMARY KEY (w_id)
)`,
		`CREATE TABLE district (
  w_id bigint NOT NULL, d_id bigint NOT NULL, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state varchar(2), d_zip varchar(9), d_tax bigint, d_ytd bigint, d_next_o_id bigint,
  PRIMARY KEY (w_id, d_id)
) INTERLEAVE IN PARENT warehouse ON DELETE CASCADE`,
		`CREATE TABLE customer (
  w_id bigint NOT NULL, d_id bigint NOT NULL, c_id bigint NOT NULL, c_first varchar(16), c_middle varchar(2), c_last varchar(16),
  c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state varchar(2), c_zip varchar(9), c_phone varchar(16),
  c_since timestamptz, c_credit varchar(2), c_credit_lim bigint, c_discount bigint, c_balance bigint, c_ytd_payment bigint,
  c_payment_cnt bigint, c_delivery_cnt bigint, c_data varchar(500),
  PRIMARY KEY (w_id, d_id, c_id)
) INTERLEAVE IN PARENT district ON DELETE CASCADE`,
		`CREATE INDEX customer_by_last ON customer (w_id, d_id, c_last, c_first) INTERLEAVE IN district`,
		`CREATE TABLE history (
  w_id bigint NOT NULL, h_id bigint NOT NULL, h_c_id bigint, h_c_d_id bigint, h_c_w_id bigint, h_d_id bigint,
  h_date timestamptz, h_amount bigint, h_data varchar(24),
  PRIMARY KEY (w_id, h_id)
) INTERLEAVE IN PARENT warehouse ON DELETE CASCADE`,
		`CREATE TABLE orders (
  w_id bigint NOT NULL, d_id bigint NOT NULL, o_id bigint NOT NULL, o_c_id bigint, o_entry_d timestamptz,
  o_carrier_id bigint, o_ol_cnt bigint, o_all_local boolean,
  PRIMARY KEY (w_id, d_id, o_id)
) INTERLEAVE IN PARENT district ON DELETE CASCADE`,
		`CREATE INDEX orders_by_customer ON orders (w_id, d_id, o_c_id, o_id DESC) INTERLEAVE IN district`,
		`CREATE TABLE new_order (
  w_id bigint NOT NULL, d_id bigint NOT NULL, o_id bigint NOT NULL,
  PRIMARY KEY (w_id, d_id, o_id)
) INTERLEAVE IN PARENT district ON DELETE CASCADE`,
		`CREATE TABLE order_line (
  w_id bigint NOT NULL, d_id bigint NOT NULL, o_id bigint NOT NULL, ol_number bigint NOT NULL, ol_i_id bigint,
  ol_supply_w_id bigint, ol_delivery_d timestamptz, ol_quantity bigint, ol_amount bigint, ol_dist_info varchar(24),
  PRIMARY KEY (w_id, d_id, o_id, ol_number)
) INTERLEAVE IN PARENT orders ON DELETE CASCADE`,
		`CREATE TABLE stock (
  w_id bigint NOT NULL, s_i_id bigint NOT NULL, s_quantity bigint,
  s_dist_01 varchar(24), s_dist_02 varchar(24), s_dist_03 varchar(24), s_dist_04 varchar(24), s_dist_05 varchar(24),
  s_dist_06 varchar(24), s_dist_07 varchar(24), s_dist_08 varchar(24), s_dist_09 varchar(24), s_dist_10 varchar(24),
  s_ytd bigint, s_order_cnt bigint, s_remote_cnt bigint, s_data varchar(50),
  PRIMARY KEY (w_id, s_i_id)
) INTERLEAVE IN PARENT warehouse ON DELETE CASCADE`,
		`CREATE TABLE item (
  i_id bigint NOT NULL, i_im_id bigint, i_name varchar(24), i_price bigint, i_data varchar(50),
  PRIMARY KEY (i_id)
)`,
	},
}

// tpccSchema is the TPC-C schema of one population. Its main table, whose
// marker records the load, is warehouse; its "rows" are load units
// (tpcc.Unit).
type tpccSchema struct {
	scale   v1alpha1.TPCCScale
	dialect v1alpha1.Dialect
}

func (tpccSchema) Table() string { return tpcc.TableWarehouse }

func (s tpccSchema) Dialect() v1alpha1.Dialect { return s.dialect }

func (s tpccSchema) DDL() []string { return slices.Clone(tpccDDL[s.dialect]) }

// Rows writes load unit k: an item, a warehouse with its districts, a
// stock row, or a customer with its history, order, order lines and
// new-order row.
//
// Loaders write units in parallel and in any order, and an interleaved
// row needs its parent row at commit: a unit whose rows are children of a
// warehouse or district it does not write first upserts those parents'
// keys alone. That writes no other column, so it neither overwrites the
// parent's unit, whenever that commits, nor needs it to have committed.
func (s tpccSchema) Rows(k int64) []*spanner.Mutation {
	rows := tpcc.Unit(s.scale, k)
	ms := make([]*spanner.Mutation, 0, len(rows)+2)
	switch rows[0].Table {
	case tpcc.TableStock:
		ms = append(ms, spanner.InsertOrUpdate(tpcc.TableWarehouse, []string{"w_id"}, rows[0].Values[:1]))
	case tpcc.TableCustomer:
		ms = append(ms, spanner.InsertOrUpdate(tpcc.TableWarehouse, []string{"w_id"}, rows[0].Values[:1]),
			spanner.InsertOrUpdate(tpcc.TableDistrict, []string{"w_id", "d_id"}, rows[0].Values[:2]))
	}
	for _, r := range rows {
		ms = append(ms, spanner.InsertOrUpdate(r.Table, tpcc.Columns[r.Table], r.Values))
	}
	return ms
}
