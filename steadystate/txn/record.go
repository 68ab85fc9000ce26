package txn

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

// A record's value: magic, run ID, producer, transaction sequence, index
// in the transaction and the transaction's record count, big-endian.
const (
	magic      = "kctx"
	recordSize = len(magic) + 8 + 4 + 8 + 2 + 2
)

// endProducer is the producer of the end marker: the transaction written
// after every producer stopped, one record on each partition, whose index
// is its partition. A reader that has seen it on a partition has read all
// of the run's records there.
const endProducer = math.MaxUint32

// ident is what a record says of itself.
type ident struct {
	run   uint64
	txn   txncheck.Txn
	index int
	count int
}

func encode(id ident) []byte {
	b := make([]byte, 0, recordSize)
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint64(b, id.run)
	b = binary.BigEndian.AppendUint32(b, id.txn.Producer)
	b = binary.BigEndian.AppendUint64(b, id.txn.Seq)
	b = binary.BigEndian.AppendUint16(b, uint16(id.index))
	return binary.BigEndian.AppendUint16(b, uint16(id.count))
}

var errNotOurs = errors.New("txn: not a record of this workload")

func decode(b []byte) (ident, error) {
	if len(b) != recordSize || string(b[:len(magic)]) != magic {
		return ident{}, errNotOurs
	}
	b = b[len(magic):]
	return ident{
		run:   binary.BigEndian.Uint64(b),
		txn:   txncheck.Txn{Producer: binary.BigEndian.Uint32(b[8:]), Seq: binary.BigEndian.Uint64(b[12:])},
		index: int(binary.BigEndian.Uint16(b[20:])),
		count: int(binary.BigEndian.Uint16(b[22:])),
	}, nil
}
