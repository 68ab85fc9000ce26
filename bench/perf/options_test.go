package main

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	defaults := options{
		records: 1_000_000, recordSizes: []int{100, 1024, 10240}, brokers: 3, partitions: 6,
		e2eCount: 2000, e2eRate: 200, out: "bench/results", version: "4.4.0",
	}
	f := strings.Fields
	for _, tt := range []struct {
		name    string
		args    []string
		want    func(o *options)
		wantErr string // "" for none; "help" for flag.ErrHelp
	}{
		{name: "defaults"},
		{name: "brokers and sizes", args: f("--brokers 5 --record-sizes 1024,100 --partitions 12"), want: func(o *options) {
			o.brokers, o.recordSizes, o.partitions = 5, []int{1024, 100}, 12
		}},
		{name: "sizes with a space", args: []string{"--record-sizes", "512, 1024", "--records", "5000"}, want: func(o *options) {
			o.recordSizes, o.records = []int{512, 1024}, 5000
		}},
		{name: "help", args: f("-h"), wantErr: "help"},
		{name: "zero brokers", args: f("--brokers 0"), wantErr: "--brokers 0: need 1 to 9"},
		{name: "too many brokers", args: f("--brokers 10"), wantErr: "--brokers 10"},
		{name: "no records", args: f("--records 0"), wantErr: "--records 0"},
		{name: "too many records", args: f("--records 2000000000"), wantErr: "--records 2000000000"},
		{name: "zero partitions", args: f("--partitions 0"), wantErr: "--partitions 0"},
		{name: "size below the header", args: f("--record-sizes 100,30"), wantErr: "size 30 is below 31"},
		{name: "size too big", args: f("--record-sizes 2000000"), wantErr: "size 2000000 is over"},
		{name: "size twice", args: f("--record-sizes 100,1024,100"), wantErr: "size 100 is given twice"},
		{name: "empty sizes", args: f("--record-sizes="), wantErr: `"" is not a whole number`},
		{name: "size not a number", args: f("--record-sizes 1k"), wantErr: `"1k" is not a whole number`},
		{name: "old single size flag", args: f("--record-size 100"), wantErr: "flag provided but not defined"},
		{name: "e2e rate", args: f("--e2e-rate 0"), wantErr: "--e2e-rate 0"},
		{name: "e2e messages", args: f("--e2e-messages -1"), wantErr: "--e2e-messages -1"},
		{name: "empty out", args: f("--out="), wantErr: "--out is empty"},
		{name: "argument", args: f("--brokers 3 extra"), wantErr: "unexpected arguments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOptions(tt.args, io.Discard)
			switch {
			case tt.wantErr == "help":
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("err = %v, want flag.ErrHelp", err)
				}
				return
			case tt.wantErr != "":
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want errUsage with %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			want := defaults
			want.recordSizes = append([]int(nil), defaults.recordSizes...)
			if tt.want != nil {
				tt.want(&want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestRecordsAt(t *testing.T) {
	for _, tt := range []struct {
		records int64
		sizes   []int
		size    int
		want    int64
	}{
		{1_000_000, []int{100, 1024, 10240}, 100, 1_000_000},
		{1_000_000, []int{100, 1024, 10240}, 1024, 97_656},
		{1_000_000, []int{100, 1024, 10240}, 10240, minRecordsPerRun}, // 9,765 by bytes
		{1_000_000, []int{10240, 100}, 10240, minRecordsPerRun},       // the smallest, not the first
		{5_000, []int{100, 10240}, 10240, 5_000},                      // never more than asked
		{200_000, []int{1024}, 1024, 200_000},
	} {
		o := options{records: tt.records, recordSizes: tt.sizes}
		if got := o.recordsAt(tt.size); got != tt.want {
			t.Errorf("records %d, sizes %v: recordsAt(%d) = %d, want %d", tt.records, tt.sizes, tt.size, got, tt.want)
		}
	}
}

func TestReplication(t *testing.T) {
	for _, tt := range []struct {
		brokers int
		rf      int16
		minISR  int
	}{{1, 1, 1}, {2, 2, 2}, {3, 3, 2}, {5, 3, 2}} {
		rf, minISR := options{brokers: tt.brokers}.replication()
		if rf != tt.rf || minISR != tt.minISR {
			t.Errorf("%d brokers: replication %d, min.insync %d; want %d, %d", tt.brokers, rf, minISR, tt.rf, tt.minISR)
		}
	}
}
