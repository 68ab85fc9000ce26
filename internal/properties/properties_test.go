package properties

import (
	"reflect"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		in   string
		key  bool
		want string
	}{
		{in: "plain.value-1_2", want: "plain.value-1_2"},
		{in: "a b", want: "a b"},
		{in: "a b", key: true, want: `a\ b`},
		{in: " a", want: `\ a`},
		{in: "k=v:w", want: "k=v:w"},
		{in: "k=v:w", key: true, want: `k\=v\:w`},
		{in: "#!", want: "#!"},
		{in: "#!", key: true, want: `\#\!`},
		{in: `C:\x`, want: `C:\\x`},
		{in: "\t\r\n\f", want: `\t\r\n\f`},
		{in: "\x01", want: `\u0001`},
		{in: "ü😀", want: `\u00FC\uD83D\uDE00`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := escape(tt.in, tt.key); got != tt.want {
				t.Errorf("escape(%q, key=%v) = %q; want %q", tt.in, tt.key, got, tt.want)
			}
		})
	}
}

func TestProperties(t *testing.T) {
	p := NewProperties(map[string]string{"b": "2", "a": "1"})
	q := p.With("c", "3").With("a", "0")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"Len", p.Len(), 2},
		{"List sorted", p.List(), []Property{{"a", "1"}, {"b", "2"}}},
		{"With leaves the original", p.String(), "a=1\nb=2\n"},
		{"With sets and overrides", q.String(), "a=0\nb=2\nc=3\n"},
		{"Map", q.Map(), map[string]string{"a": "0", "b": "2", "c": "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v; want %#v", tt.got, tt.want)
			}
		})
	}
	for _, key := range []string{"a", "b", "c", "z"} {
		v, ok := q.Get(key)
		wantV, wantOK := q.Map()[key]
		if v != wantV || ok != wantOK {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", key, v, ok, wantV, wantOK)
		}
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"equals", "a=1\nb = 2 \n", map[string]string{"a": "1", "b": "2 "}},
		{"colon and space separators", "a:1\nb 2\nc\t:\t3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"comments and blanks", "# x=1\n  ! y=2\n\n\t\nz=3", map[string]string{"z": "3"}},
		{"empty value and bare key", "a=\nb", map[string]string{"a": "", "b": ""}},
		{"separator in the value", "url=http://h:1/a=b", map[string]string{"url": "http://h:1/a=b"}},
		{"escaped key", `k\=\:\ x=v`, map[string]string{"k=: x": "v"}},
		{"continued lines", "a=one, \\\n    two\nb=3", map[string]string{"a": "one, two", "b": "3"}},
		{"even backslashes do not continue", `a=C:\\` + "\nb=2", map[string]string{"a": `C:\`, "b": "2"}},
		{"a continued comment-like line is data", "a=x\\\n#y", map[string]string{"a": "x#y"}},
		{"escapes", `a=\t\n\r\f\u00FC\uD83D\uDE00\q`, map[string]string{"a": "\t\n\r\fü😀q"}},
		{"CRLF", "a=1\r\nb=2\r\n", map[string]string{"a": "1", "b": "2"}},
		{"last wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"jaas", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
			map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Read(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Map(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
	if _, err := Read(strings.NewReader(`a=\u12`)); err == nil {
		t.Error("a truncated \\u escape must be an error")
	}
}

// What WriteTo writes, Read reads back unchanged.
func TestRoundTrip(t *testing.T) {
	p := NewProperties(map[string]string{
		"plain":       "v",
		"k=y: #!":     " leading space, trailing space ",
		"windows":     `C:\dir\`,
		"lines":       "one\ntwo\r\n\tthree\f",
		"unicode":     "üñ😀",
		"":            "empty key",
		"empty value": "",
	})
	got, err := Read(strings.NewReader(p.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Map(), p.Map()) {
		t.Errorf("round trip of\n%s\ngave %q; want %q", p.String(), got.Map(), p.Map())
	}
}
