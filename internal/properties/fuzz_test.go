package properties

import (
	"maps"
	"strings"
	"testing"
)

// FuzzRead: any input is read or refused with an error, never a panic, and
// what is read writes back to text that reads as the same properties.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n",
		"# comment\n! other\nkey : value\nkey2 value2\n",
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"alice\" \\\n  password=\"p\";\n",
		"a\\=b=c\\nd\nempty=\n  spaced   =  x  \n",
		"unicode=\\u00e9t\\u00e9\n",
		"trailing=\\",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := Read(strings.NewReader(string(in)))
		if err != nil {
			return
		}
		back, err := Read(strings.NewReader(p.String()))
		if err != nil {
			t.Fatalf("what Read returned does not read back: %v\ninput %q\nwritten %q", err, in, p.String())
		}
		if !maps.Equal(p.Map(), back.Map()) {
			t.Fatalf("round trip changed the properties:\nread    %q\nre-read %q\nwritten %q", p.Map(), back.Map(), p.String())
		}
	})
}
