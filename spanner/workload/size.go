package workload

import (
	"fmt"
	"math"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// timestampBytes and int64Bytes are what Spanner stores for a TIMESTAMP and
// an INT64 value.
const (
	timestampBytes = 8
	int64Bytes     = 8
)

// rowBytes is the estimated size of one preloaded usertable row: its key
// and its ten fields.
func (s ycsbSchema) rowBytes() int64 {
	return int64(len(YCSBKey(0))) + int64(len(ycsbColumns)-1)*int64(s.fieldBytes)
}

// rowBytes is the estimated size of one preloaded Tweet row: its key, its
// author, its content, its timestamps and Sort (Favos is empty), and its
// TweetSortAsc index entry (Sort and the key).
func (s tweetSchema) rowBytes() int64 {
	key := int64(len(tweetKey(0)))
	return key + int64(len(author(0))) + int64(s.fieldBytes) + 3*timestampBytes + int64Bytes + // the row
		int64Bytes + key // its index entry
}

// DatasetBytes is the estimated size of the dataset a resolved workload
// preloads (rows × the size of one row, saturating at math.MaxInt64): the
// data Spanner stores, without its per-row overhead or the rows a run
// inserts. The manager caps it (--max-dataset-bytes).
func DatasetBytes(spec *v1alpha1.WorkloadSpec, d v1alpha1.Dialect) (int64, error) {
	if spec.Dataset.Rows == nil || spec.Dataset.FieldBytes == nil {
		return 0, fmt.Errorf("dataset size: the workload is not resolved")
	}
	var row int64
	switch fb := int(*spec.Dataset.FieldBytes); spec.Type {
	case v1alpha1.WorkloadYCSB:
		row = ycsbSchema{fieldBytes: fb}.rowBytes()
	case v1alpha1.WorkloadTweet:
		row = tweetSchema{fieldBytes: fb}.rowBytes()
	case v1alpha1.WorkloadTPCC:
		return tpccBytes(spec.TPCC.Scale()), nil
	case v1alpha1.WorkloadCustom:
		s, err := newCustomSchema(spec, d)
		if err != nil {
			return 0, err
		}
		row = s.unitBytes()
	default:
		return 0, fmt.Errorf("unknown workload type %q", spec.Type)
	}
	rows := max(*spec.Dataset.Rows, 0)
	if rows > math.MaxInt64/row {
		return math.MaxInt64, nil
	}
	return rows * row, nil
}

// TPC-C's estimated row sizes in bytes (clause 4.2.2's table of row
// lengths; order lines average 10 per order).
const (
	tpccItemBytes      = 82
	tpccWarehouseBytes = 89
	tpccDistrictBytes  = 95
	tpccStockBytes     = 306
	// tpccCustomerBytes is a customer with its history row, its order and
	// ten order lines.
	tpccCustomerBytes = 655 + 46 + 24 + 10*54
	tpccNewOrderBytes = 8
)

// tpccBytes is the estimated size of a TPC-C population, saturating at
// math.MaxInt64.
func tpccBytes(s v1alpha1.TPCCScale) int64 {
	perWarehouse := tpccWarehouseBytes + v1alpha1.TPCCDistricts*(tpccDistrictBytes+s.Customers*tpccCustomerBytes+s.NewOrders*tpccNewOrderBytes) +
		s.Items*tpccStockBytes
	if s.Warehouses > (math.MaxInt64-s.Items*tpccItemBytes)/perWarehouse {
		return math.MaxInt64
	}
	return s.Items*tpccItemBytes + s.Warehouses*perWarehouse
}
