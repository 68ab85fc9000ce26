package localkafka

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// LogPath returns the file that holds node id's stdout and stderr, from
// every start, each after a "=== localkafka: node N: starting at T ===" line.
func (c *Cluster) LogPath(id int32) (string, error) {
	n, err := c.node(id)
	if err != nil {
		return "", err
	}
	return n.logPath(), nil
}

// Logs returns node id's whole log (see LogPath).
func (c *Cluster) Logs(id int32) (string, error) {
	n, err := c.node(id)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(n.logPath())
	if err != nil {
		return "", fmt.Errorf("localkafka: node %d: %w", id, err)
	}
	return string(b), nil
}

// DumpLogs writes the last lines of every node's log to w, each under a
// header that names the node and its file, as a test prints on failure.
func (c *Cluster) DumpLogs(w io.Writer, lines int) error {
	c.mu.Lock()
	nodes := c.nodes
	c.mu.Unlock()
	for _, n := range nodes {
		if _, err := fmt.Fprintf(w, "=== node %d (%s), last %d lines of %s ===\n%s", n.ID, n.Roles, lines, n.logPath(), tailOrErr(n.logPath(), lines)); err != nil {
			return fmt.Errorf("localkafka: dumping logs: %w", err)
		}
	}
	return nil
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	b = bytes.TrimRight(b, "\n")
	if len(b) == 0 || n <= 0 {
		return "", nil
	}
	i := len(b)
	for range n {
		j := bytes.LastIndexByte(b[:i], '\n')
		if j < 0 {
			i = 0
			break
		}
		i = j
	}
	if i > 0 {
		i++ // past the newline
	}
	return string(b[i:]) + "\n", nil
}

// tailOrErr is tail, or a line that says why there is none.
func tailOrErr(path string, n int) string {
	s, err := tail(path, n)
	if err != nil {
		return fmt.Sprintf("(no log: %v)\n", err)
	}
	return s
}
