package suites

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// brokerIdentity is what must survive a broker's restart: the node ID, the
// log dir's directory ID and the cluster ID from meta.properties, and the
// data dir itself. PID changes with every start.
type brokerIdentity struct {
	NodeID      string
	DirectoryID string
	ClusterID   string
	DataDir     string
	PID         int
}

// identityOf reads broker id's identity from its data dir.
func identityOf(id int32) (brokerIdentity, error) {
	for _, n := range tgt.kafka.Nodes() {
		if n.ID != id {
			continue
		}
		dir := filepath.Join(n.Dir, "data")
		props, err := readProperties(filepath.Join(dir, "meta.properties"))
		if err != nil {
			return brokerIdentity{}, fmt.Errorf("identity of broker %d: %w", id, err)
		}
		return brokerIdentity{
			NodeID: props["node.id"], DirectoryID: props["directory.id"], ClusterID: props["cluster.id"],
			DataDir: dir, PID: n.PID,
		}, nil
	}
	return brokerIdentity{}, fmt.Errorf("identity of broker %d: no such node", id)
}

// identityProblems lists, one by one, what differs between before and after
// a restart, with what was expected and what was seen.
func identityProblems(before, after brokerIdentity, err error) []string {
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	same := func(what, want, got string) {
		if want != got {
			out = append(out, fmt.Sprintf("%s changed: expected %q, saw %q", what, want, got))
		}
	}
	same("node.id", before.NodeID, after.NodeID)
	same("log dir directory.id", before.DirectoryID, after.DirectoryID)
	same("cluster.id", before.ClusterID, after.ClusterID)
	same("data dir", before.DataDir, after.DataDir)
	switch {
	case after.PID == 0:
		out = append(out, "broker is not running after the restart")
	case after.PID == before.PID:
		out = append(out, fmt.Sprintf("broker still runs as the old process %d: it was never restarted", before.PID))
	}
	return out
}

func readProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out, sc.Err()
}
