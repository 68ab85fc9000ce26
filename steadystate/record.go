package steadystate

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Every record's value starts with a fixed header and is padded with zeros to
// the configured record size:
//
//	offset size field
//	0      2    magic "KC"
//	2      1    header version (1)
//	3      8    run ID
//	11     4    producer ID
//	15     8    sequence within (producer, partition), from 0
//	23     8    intended send time, Unix nanoseconds
const (
	headerMagic0  = 'K'
	headerMagic1  = 'C'
	headerVersion = 1

	// HeaderSize is the smallest record size that can carry the header.
	HeaderSize = 31
)

// errNotOurs is returned by decodeHeader for a value that is not a kafkachaos
// record (wrong magic or version, or too short).
var errNotOurs = errors.New("steadystate: not a kafkachaos record")

// header is what each record carries so the verifier can check it.
type header struct {
	RunID    uint64
	Producer uint32
	Seq      uint64
	Intended int64 // Unix nanoseconds
}

// encode writes h at the start of buf, which must be at least HeaderSize long.
func (h header) encode(buf []byte) {
	_ = buf[HeaderSize-1]
	buf[0], buf[1], buf[2] = headerMagic0, headerMagic1, headerVersion
	binary.BigEndian.PutUint64(buf[3:], h.RunID)
	binary.BigEndian.PutUint32(buf[11:], h.Producer)
	binary.BigEndian.PutUint64(buf[15:], h.Seq)
	binary.BigEndian.PutUint64(buf[23:], uint64(h.Intended))
}

// decodeHeader reads the header at the start of a record value.
func decodeHeader(v []byte) (header, error) {
	if len(v) < HeaderSize || v[0] != headerMagic0 || v[1] != headerMagic1 {
		return header{}, errNotOurs
	}
	if v[2] != headerVersion {
		return header{}, fmt.Errorf("%w: header version %d", errNotOurs, v[2])
	}
	return header{
		RunID:    binary.BigEndian.Uint64(v[3:]),
		Producer: binary.BigEndian.Uint32(v[11:]),
		Seq:      binary.BigEndian.Uint64(v[15:]),
		Intended: int64(binary.BigEndian.Uint64(v[23:])),
	}, nil
}
