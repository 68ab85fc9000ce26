package netpol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"syscall"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
)

// Tag names one local cluster's host objects (its nftables table and its
// cgroup directory) after its state directory, so that two clusters never
// touch each other's, and `cluster down` after a crash finds its own.
func Tag(stateDir string) string {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:4])
}

// TableName is the cluster's nftables table (family inet).
func TableName(tag string) string { return "kafkachaos_" + tag }

// Table programs the cluster's nftables table.
type Table struct {
	Tag string
	// ClusterCgroup is the ID of the cluster's cgroup directory: only
	// connections opened from below it are marked.
	ClusterCgroup uint64
}

// NewTable returns the table of the cluster whose cgroups are cg.
func NewTable(tag string, cg *Cgroups) (*Table, error) {
	id, err := cgroupID(cg.Dir)
	if err != nil {
		return nil, err
	}
	return &Table{Tag: tag, ClusterCgroup: id}, nil
}

// Apply replaces the table with rules for rs, in one transaction: there is
// no moment without the marking rule or with half the rules.
func (t *Table) Apply(rs Ruleset) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("netpol: nftables: %w", err)
	}
	table := &nftables.Table{Family: nftables.TableFamilyINet, Name: TableName(t.Tag)}
	// add-delete-add replaces a table whether or not it exists.
	c.AddTable(table)
	c.DelTable(table)
	c.AddTable(table)
	accept := nftables.ChainPolicyAccept
	out := c.AddChain(&nftables.Chain{Name: "output", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &accept})
	egress := c.AddChain(&nftables.Chain{Name: "egress", Table: table})
	ingress := c.AddChain(&nftables.Chain{Name: "ingress", Table: table})
	rule := func(ch *nftables.Chain, exprs ...expr.Any) {
		c.AddRule(&nftables.Rule{Table: table, Chain: ch, Exprs: exprs})
	}

	// Mark each new connection opened by a pod of this cluster with its
	// pod's cgroup: ct direction original, ct mark 0, the socket's level-1
	// cgroup is the cluster's; then ct mark = the level-2 cgroup's ID.
	rule(out, concat(
		ctIs(expr.CtKeyDIRECTION, []byte{0}),
		ctIs(expr.CtKeyMARK, u32(0)),
		[]expr.Any{
			&expr.Socket{Key: expr.SocketKeyCgroupv2, Level: 1, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint64(t.ClusterCgroup)},
			&expr.Socket{Key: expr.SocketKeyCgroupv2, Level: podLevel, Register: 1},
			&expr.Ct{Key: expr.CtKeyMARK, Register: 1, SourceRegister: true},
		})...)
	// Only IPv4 TCP is judged.
	ipv4TCP := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{syscall.AF_INET}},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{syscall.IPPROTO_TCP}},
	}
	for _, ch := range []*nftables.Chain{egress, ingress} {
		rule(out, concat(ipv4TCP, []expr.Any{&expr.Verdict{Kind: expr.VerdictJump, Chain: ch.Name}})...)
	}

	// Egress: the initiator (ct mark) is isolated; return on an allowed
	// destination, drop on any other pod's address.
	for _, iso := range rs.Egress {
		from := ctIs(expr.CtKeyMARK, u32(iso.Mark))
		if iso.Mark == 0 {
			continue // not matchable; Compile's callers give every pod a cgroup
		}
		for _, f := range iso.Allow {
			rule(egress, concat(from, dst(f.Peer), port(f.Port), ret())...)
		}
		for _, ip := range rs.Pods {
			if ip != iso.IP {
				rule(egress, concat(from, dst(ip), drop())...)
			}
		}
	}
	// Ingress: the responder (ct original daddr) is isolated; the host
	// (mark 0) and the pod itself always pass.
	for _, iso := range rs.Ingress {
		to := dst(iso.IP)
		rule(ingress, concat(to, ctIs(expr.CtKeyMARK, u32(0)), ret())...)
		if iso.Mark != 0 {
			rule(ingress, concat(to, ctIs(expr.CtKeyMARK, u32(iso.Mark)), ret())...)
		}
		for _, f := range iso.Allow {
			var from []expr.Any
			if f.PeerMark != 0 {
				from = ctIs(expr.CtKeyMARK, u32(f.PeerMark))
			}
			rule(ingress, concat(to, from, port(f.Port), ret())...)
		}
		rule(ingress, concat(to, drop())...)
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("netpol: program table %s: %w", table.Name, err)
	}
	return nil
}

// Delete removes the cluster's table if it exists. Where nftables cannot
// be reached at all (no nf_tables, no permission) no table can have been
// made, and there is nothing to delete.
func Delete(tag string) error {
	c, t, err := findTable(tag)
	if err != nil || t == nil {
		return nil
	}
	c.DelTable(t)
	if err := c.Flush(); err != nil && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("netpol: delete table %s: %w", t.Name, err)
	}
	return nil
}

// Exists reports whether the cluster's table is there (for tests that check
// the host was left as found).
func Exists(tag string) (bool, error) {
	_, t, err := findTable(tag)
	return t != nil, err
}

// findTable returns the cluster's table, nil when there is none.
func findTable(tag string) (*nftables.Conn, *nftables.Table, error) {
	c, err := nftables.New()
	if err != nil {
		return nil, nil, fmt.Errorf("netpol: nftables: %w", err)
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return nil, nil, fmt.Errorf("netpol: list tables: %w", err)
	}
	for _, t := range tables {
		if t.Name == TableName(tag) {
			return c, t, nil
		}
	}
	return c, nil, nil
}

func concat(parts ...[]expr.Any) []expr.Any {
	var out []expr.Any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func u32(v uint32) []byte { return binaryutil.NativeEndian.PutUint32(v) }

// ctIs matches a conntrack key of the original direction.
func ctIs(key expr.CtKey, v []byte) []expr.Any {
	return []expr.Any{
		&expr.Ct{Key: key, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: v},
	}
}

// dst matches the connection's original destination address; an invalid
// address matches any.
func dst(ip netip.Addr) []expr.Any {
	if !ip.IsValid() {
		return nil
	}
	a := ip.As4()
	return []expr.Any{
		&expr.Ct{Key: expr.CtKeyDST, Direction: 0, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: a[:]},
	}
}

// port matches the connection's original destination port; 0 matches any.
func port(p uint16) []expr.Any {
	if p == 0 {
		return nil
	}
	return []expr.Any{
		&expr.Ct{Key: expr.CtKeyPROTODST, Direction: 0, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.BigEndian.AppendUint16(nil, p)},
	}
}

func ret() []expr.Any  { return []expr.Any{&expr.Verdict{Kind: expr.VerdictReturn}} }
func drop() []expr.Any { return []expr.Any{&expr.Verdict{Kind: expr.VerdictDrop}} }
