package txn

import (
	"testing"

	"github.com/kafkachaos/kafkachaos/steadystate/txncheck"
)

func TestRecordRoundTrip(t *testing.T) {
	want := ident{run: 0xfeed, txn: txncheck.Txn{Producer: 7, Seq: 1 << 40}, index: 3, count: 4}
	got, err := decode(encode(want))
	if err != nil || got != want {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", want, got, err)
	}
	for _, bad := range [][]byte{nil, []byte("kctx"), append([]byte("kcty"), make([]byte, recordSize-4)...)} {
		if _, err := decode(bad); err == nil {
			t.Errorf("decode(%q) took it", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode(ident{run: 1, txn: txncheck.Txn{Producer: 2, Seq: 3}, index: 4, count: 5}))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := decode(b)
		if err == nil && string(encode(id)) != string(b) {
			t.Fatalf("decode(%x) = %+v, which encodes differently", b, id)
		}
	})
}
