package zkconfig

import (
	"slices"
	"strings"
)

// Line is one key=value line of zoo.cfg.
type Line struct {
	Key   string
	Value string
}

// Config is a zoo.cfg: its lines, in order. ZooKeeper reads the file with
// java.util.Properties, so of two lines with one key the last counts. The
// zero value is empty; a Config is never changed in place.
type Config struct {
	lines []Line
}

// Lines returns a copy of c's lines, in order.
func (c Config) Lines() []Line { return slices.Clone(c.lines) }

// Get returns the value of key as ZooKeeper reads it (the last line of
// key), and whether c has key.
func (c Config) Get(key string) (string, bool) {
	for i := len(c.lines) - 1; i >= 0; i-- {
		if c.lines[i].Key == key {
			return c.lines[i].Value, true
		}
	}
	return "", false
}

// With returns a copy of c with key set to value: every line of key gets
// value, or a line is added at the end when c has no line of key.
func (c Config) With(key, value string) Config {
	out := Config{lines: c.Lines()}
	found := false
	for i := range out.lines {
		if out.lines[i].Key == key {
			out.lines[i].Value, found = value, true
		}
	}
	if !found {
		out.lines = append(out.lines, Line{Key: key, Value: value})
	}
	return out
}

// Servers returns the servers of c's server.N lines, in order. Render has
// checked them; a Config not from Render may hold one that fails to parse.
func (c Config) Servers() ([]Server, error) {
	var out []Server
	for _, l := range c.lines {
		if !strings.HasPrefix(l.Key, "server.") {
			continue
		}
		s, err := ParseServer(l.Key, l.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// WithServer returns a copy of c in which every line of server s.ID
// (server.N with N its ID, however written) is s.
func (c Config) WithServer(s Server) Config {
	out := Config{lines: c.Lines()}
	for i, l := range out.lines {
		id, ok := strings.CutPrefix(l.Key, "server.")
		if !ok {
			continue
		}
		if n, err := ParseID(id); err == nil && n == s.ID {
			out.lines[i] = Line{Key: s.Key(), Value: s.Value()}
		}
	}
	return out
}

// String returns the file: one key=value line each, written raw as the
// image's echo writes them, so that ZooKeeper reads the same values.
func (c Config) String() string {
	var b strings.Builder
	for _, l := range c.lines {
		b.WriteString(l.Key + "=" + l.Value + "\n")
	}
	return b.String()
}
