package properties

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf16"
)

// Property is one key=value line of a .properties file.
type Property struct {
	Key   string
	Value string
}

// Properties is an immutable set of properties, kept sorted by key so that
// what it writes is the same for the same input. The zero value is empty.
type Properties struct {
	list []Property // sorted by Key, keys unique
}

// NewProperties returns the properties in m.
func NewProperties(m map[string]string) Properties {
	list := make([]Property, 0, len(m))
	for k, v := range m {
		list = append(list, Property{Key: k, Value: v})
	}
	slices.SortFunc(list, func(a, b Property) int { return strings.Compare(a.Key, b.Key) })
	return Properties{list: list}
}

// Len returns the number of properties.
func (p Properties) Len() int { return len(p.list) }

// Get returns the value of key, and whether it is set.
func (p Properties) Get(key string) (string, bool) {
	i, ok := slices.BinarySearchFunc(p.list, key, func(e Property, k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		return "", false
	}
	return p.list[i].Value, true
}

// List returns a copy of the properties, sorted by key.
func (p Properties) List() []Property { return slices.Clone(p.list) }

// Map returns the properties as a map.
func (p Properties) Map() map[string]string {
	m := make(map[string]string, len(p.list))
	for _, e := range p.list {
		m[e.Key] = e.Value
	}
	return m
}

// With returns a copy of p with key set to value; p is unchanged.
func (p Properties) With(key, value string) Properties {
	m := p.Map()
	m[key] = value
	return NewProperties(m)
}

// WriteTo writes the properties in java.util.Properties format, one
// key=value line each, in key order. Keys and values are escaped so that
// Properties.load reads back exactly the strings given (including
// backslashes, leading spaces, line breaks and non-Latin-1 text). The
// image writes raw lines instead; both read the same for every value
// without those characters. Separators and '#' inside a value are left as
// they are: Properties.load only looks for them in the key.
func (p Properties) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	for _, e := range p.list {
		m, _ := bw.WriteString(escape(e.Key, true) + "=" + escape(e.Value, false) + "\n")
		n += int64(m)
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("properties: write: %w", err)
	}
	return n, nil
}

// String returns what WriteTo writes.
func (p Properties) String() string {
	var b strings.Builder
	_, _ = p.WriteTo(&b)
	return b.String()
}

// escape escapes s for a .properties line so that Properties.load reads it
// back unchanged, escaping no more than needed to keep files readable: a
// backslash, line breaks, tabs and form feeds always; in a key, also spaces,
// the separators '=' and ':', and the comment marks '#' and '!'; in a value,
// a leading space. Characters outside printable ASCII become \uXXXX, since
// Kafka reads the file as ISO 8859-1.
func escape(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case key && (r == '=' || r == ':' || r == '#' || r == '!'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
