package properties

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Read parses a .properties file as java.util.Properties.load does:
// comments ('#' or '!'), blank lines, lines continued by an odd number of
// trailing backslashes, keys ending at the first unescaped '=', ':' or
// white space, and the escapes \t, \n, \r, \f and \uXXXX (any other escaped
// character stands for itself). A key given twice keeps its last value.
// The input is read as UTF-8, where Java reads ISO 8859-1; the two agree
// on ASCII, which is all that WriteTo writes. A line that is not valid
// UTF-8 is an error.
func Read(r io.Reader) (Properties, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var logical strings.Builder
	continuing := false
	for n := 1; sc.Scan(); n++ {
		if !utf8.Valid(sc.Bytes()) {
			return Properties{}, fmt.Errorf("properties: line %d is not UTF-8 text", n)
		}
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if !continuing && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		line = strings.TrimSuffix(line, "\r")
		trailing := len(line) - len(strings.TrimRight(line, `\`))
		continuing = trailing%2 == 1
		if continuing {
			line = line[:len(line)-1]
		}
		logical.WriteString(line)
		if continuing {
			continue
		}
		k, v, err := splitLine(logical.String())
		if err != nil {
			return Properties{}, fmt.Errorf("properties: line %d: %w", n, err)
		}
		m[k] = v
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		return Properties{}, fmt.Errorf("properties: read: %w", err)
	}
	if continuing { // Java takes a continued last line as it stands
		k, v, err := splitLine(logical.String())
		if err != nil {
			return Properties{}, fmt.Errorf("properties: last line: %w", err)
		}
		m[k] = v
	}
	return NewProperties(m), nil
}

// splitLine splits a logical line into its unescaped key and value.
func splitLine(line string) (key, value string, err error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++ // the escaped character is part of the key
			continue
		}
		if strings.IndexByte("=: \t\f", line[i]) >= 0 {
			end = i
			break
		}
	}
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	if key, err = unescape(line[:end]); err != nil {
		return "", "", err
	}
	if value, err = unescape(rest); err != nil {
		return "", "", err
	}
	return key, value, nil
}

// unescape undoes escape, and the escapes Java reads that escape does not
// write.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			u, err := hex4(s, i+1)
			if err != nil {
				return "", err
			}
			i += 4
			r := rune(u)
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if low, err := hex4(s, i+3); err == nil {
					if pair := utf16.DecodeRune(r, rune(low)); pair != unicode.ReplacementChar {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// hex4 reads the four hex digits of a \uXXXX escape at s[i:].
func hex4(s string, i int) (uint16, error) {
	if i+4 > len(s) {
		return 0, fmt.Errorf(`malformed \uXXXX escape in %q`, s)
	}
	u, err := strconv.ParseUint(s[i:i+4], 16, 16)
	if err != nil {
		return 0, fmt.Errorf(`malformed \uXXXX escape in %q`, s)
	}
	return uint16(u), nil
}
